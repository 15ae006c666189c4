import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { accountLiveness } from "../../../src/keys/live-account";
import { TtlCache } from "../../../src/lib/ttl-cache";
import { countingKv } from "../../support/faults";
import { apiWith } from "../../support/request";
import { storeTestKey, type TestKey } from "../../support/test-keys";
import {
  freshWebhookOwner,
  laneDelivery,
  pendingDeliveries,
  receivers,
  runLaneOnce,
  withoutDispatcher,
} from "../../support/webhook-fixtures";

/**
 * An account with a long history (docs/operations.md#api-keys): what reads its keys asks the account, a page at
 * a time, and reads nothing of KV (Miniflare enforces no limit on KV's 1,000 operations an invocation: a
 * counting wrapper does).
 */
const DAY = 86_400_000;

/**
 * `count` keys of `owner`'s account, each rotated away and long expired (or revoked), stored as rotations leave them.
 */
async function pastRotations(owner: TestKey, count: number, stoppedAt: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const stopped = new Date(stoppedAt - i * 60_000).toISOString();
    await storeTestKey({
      name: `rotation ${i}`,
      budget: owner.record.id,
      rotatedTo: owner.record.id,
      ...(i % 3 === 0 ? { revokedAt: stopped } : { expiresAt: stopped }),
    });
  }
}

describe("an account rotated 600 times", () => {
  it("reads none of its keys from KV: a lane's run, GET /v2/keys, the operators' account page; deliveries go on", async () => {
    await freshWebhookOwner();
    const owner = await storeTestKey({ scopes: ["orders:read", "webhooks:manage", "keys:manage"] });
    await pastRotations(owner, 600, Date.now() - DAY);
    const counting = countingKv();

    // A lane's run: its liveness is the account's one answer.
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [41]);
    const { posts, fetch } = receivers();
    counting.reset();
    await runLaneOnce(endpointId, {
      fetch,
      accountLiveness: (budget) => accountLiveness(env.ACCOUNTS, budget, new TtlCache(10)),
    });
    expect(posts).toHaveLength(1);
    expect(await laneDelivery(endpointId, seqs[0]!)).toMatchObject({ outcome: "delivered" });

    // GET /v2/keys: a page at a time, every key once across the pages.
    const bindings = { ...withoutDispatcher(), API_KEYS: counting.kv };
    const seen = new Set<string>();
    let cursor: string | null = null;
    let pages = 0;
    do {
      counting.reset();
      const response = await apiWith(bindings, `/v2/keys${cursor ? `?cursor=${cursor}` : ""}`, { key: owner.key });
      expect(response.status).toBe(200);
      expect(counting.operations()).toBe(0);
      const page: { data: { id: string }[]; nextCursor: string | null } = await response.json();
      expect(page.data.length).toBeLessThanOrEqual(100);
      for (const { id } of page.data) {
        expect(seen.has(id), `${id} listed twice`).toBe(false);
        seen.add(id);
      }
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor);
    expect(seen.size).toBe(601);
    expect(pages).toBe(7);

    // The operators' account page: the first 100 keys, and that there are more.
    counting.reset();
    const budgetPage = await apiWith(bindings, `/admin/keys/${owner.record.id}/budget`, {
      key: "operator-token-for-tests",
    });
    expect(budgetPage.status).toBe(200);
    // The key's id entry names its account; the rest is the account's.
    expect(counting.operations()).toBeLessThanOrEqual(1);
    expect(await budgetPage.json()).toMatchObject({ moreKeys: true, keys: expect.any(Array) });
  });

  it("refuses a limit or cursor it did not make, 400 in the Error shape", async () => {
    const owner = await storeTestKey({ scopes: ["keys:manage"] });
    for (const query of ["limit=0", "limit=101", "limit=ten", "cursor=not-ours", "page=2"]) {
      const response = await apiWith(env, `/v2/keys?${query}`, { key: owner.key });
      expect(response.status, query).toBe(400);
      expect(((await response.json()) as { code: string }).code).toBe("invalid_query");
    }
  });
});
