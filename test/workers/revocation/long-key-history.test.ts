import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { pruneBudgetEntries, STOPPED_KEYS_LISTED_MS } from "../../../src/keys/budget-entries-prune";
import { budgetLiveness, keysChangedAtOf } from "../../../src/keys/live-budget";
import { budgetPrefix } from "../../../src/keys/kv-layout";
import { findApiKeyById } from "../../../src/keys/lookup";
import { newApiKey, putApiKey } from "../../../src/keys/issue-key";
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
 * A budget with a long history (docs/operations.md#api-keys): what reads its
 * keys stays within KV's 1,000 operations an invocation (Miniflare enforces
 * none: a counting wrapper does), and a key that stopped working leaves its
 * budget's listing 30 days on.
 */
const DAY = 86_400_000;
const KV_OPERATIONS_PER_INVOCATION = 1_000;

/**
 * `count` keys of `owner`'s budget, each rotated away and long expired (or revoked), stored as rotations leave them.
 */
async function pastRotations(owner: TestKey, count: number, stoppedAt: number): Promise<void> {
  for (let i = 0; i < count; i++) {
    const stopped = new Date(stoppedAt - i * 60_000).toISOString();
    const old = newApiKey("so_test_", {
      plan: "pro",
      name: `rotation ${i}`,
      budget: owner.record.id,
      ...(i % 3 === 0 ? { revokedAt: stopped } : { expiresAt: stopped }),
    });
    await putApiKey(env.API_KEYS, old.key, { ...old.record, rotatedTo: owner.record.id });
  }
}

describe("a budget rotated 600 times", () => {
  it("keeps every read of its keys under KV's 1,000 operations: a lane's run, GET /v2/keys, the operators' budget page; deliveries go on", async () => {
    await freshWebhookOwner();
    const owner = await storeTestKey({ scopes: ["orders:read", "webhooks:manage", "keys:manage"] });
    await pastRotations(owner, 600, Date.now() - DAY);
    const counting = countingKv();

    // A lane's run: its liveness check reads the listing and only the keys it says may be live.
    const { endpointId, seqs } = await pendingDeliveries(owner.key, [41]);
    const { posts, fetch } = receivers();
    counting.reset();
    await runLaneOnce(endpointId, {
      fetch,
      budgetLiveness: (budget) =>
        budgetLiveness(counting.kv, budget, new TtlCache(10), keysChangedAtOf(env.ACCOUNTS, budget)),
    });
    expect(counting.operations()).toBeLessThanOrEqual(10);
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
      expect(counting.operations()).toBeLessThan(KV_OPERATIONS_PER_INVOCATION);
      const page: { data: { id: string }[]; nextCursor: string | null } = await response.json();
      expect(page.data.length).toBeLessThanOrEqual(101);
      for (const { id } of page.data) {
        expect(seen.has(id), `${id} listed twice`).toBe(false);
        seen.add(id);
      }
      cursor = page.nextCursor;
      pages += 1;
    } while (cursor);
    expect(seen.size).toBe(601);
    expect(pages).toBe(7);

    // The operators' budget page: the first 100 keys, and that there are more.
    counting.reset();
    const budgetPage = await apiWith(bindings, `/admin/keys/${owner.record.id}/budget`, {
      key: "operator-token-for-tests",
    });
    expect(budgetPage.status).toBe(200);
    expect(counting.operations()).toBeLessThan(KV_OPERATIONS_PER_INVOCATION);
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

describe("a key that stopped working", () => {
  it("leaves its budget's listing 30 days after it stopped, its record staying; a live key and a recent one stay listed", async () => {
    const owner = await storeTestKey();
    const now = Date.now();
    const old = (fields: object) =>
      newApiKey("so_test_", { plan: "pro", name: "old", budget: owner.record.id, ...fields });
    const revokedLongAgo = old({ revokedAt: new Date(now - STOPPED_KEYS_LISTED_MS - DAY).toISOString() });
    const expiredLongAgo = old({ expiresAt: new Date(now - STOPPED_KEYS_LISTED_MS - DAY).toISOString() });
    const revokedLately = old({ revokedAt: new Date(now - STOPPED_KEYS_LISTED_MS + DAY).toISOString() });
    const expiringLater = old({ expiresAt: new Date(now + DAY).toISOString() });
    for (const key of [revokedLongAgo, expiredLongAgo, revokedLately, expiringLater])
      await putApiKey(env.API_KEYS, key.key, key.record);
    // Round the whole namespace: a page a run, as the cron does.
    for (let run = 0; run < 50; run++) await pruneBudgetEntries(env.API_KEYS, now, 100);
    const listed = (await env.API_KEYS.list({ prefix: budgetPrefix(owner.record.id) })).keys
      .map(({ name }) => name.slice(budgetPrefix(owner.record.id).length))
      .sort();
    expect(listed).toEqual([owner.record.id, revokedLately.record.id, expiringLater.record.id].sort());
    expect((await findApiKeyById(env.API_KEYS, revokedLongAgo.record.id))?.record.revokedAt).toBeDefined();
    // And the budget is still live by its listing.
    expect(
      await budgetLiveness(
        env.API_KEYS,
        owner.record.id,
        new TtlCache(10),
        keysChangedAtOf(env.ACCOUNTS, owner.record.id),
      ),
    ).toBe("live");
  });

  it("leaves a budget whose every key stopped long ago with nothing listed, and that budget is dead, not waited on for ever", async () => {
    const now = Date.now();
    const gone = newApiKey("so_test_", {
      plan: "pro",
      name: "long revoked",
      revokedAt: new Date(now - STOPPED_KEYS_LISTED_MS - DAY).toISOString(),
    });
    await putApiKey(env.API_KEYS, gone.key, gone.record);
    for (let run = 0; run < 50; run++) await pruneBudgetEntries(env.API_KEYS, now, 100);
    expect((await env.API_KEYS.list({ prefix: budgetPrefix(gone.record.id) })).keys).toEqual([]);
    expect(
      await budgetLiveness(
        env.API_KEYS,
        gone.record.id,
        new TtlCache(10),
        keysChangedAtOf(env.ACCOUNTS, gone.record.id),
        now,
      ),
    ).toBe("dead");
    // A key made a moment ago that the list does not show yet is live by its own entry.
    const fresh = newApiKey("so_test_", { plan: "pro", name: "new" });
    const unlisted = {
      put: async (name: string, value: string, options?: unknown) =>
        void (name.startsWith("budget:") || (await env.API_KEYS.put(name, value, options as KVNamespacePutOptions))),
    };
    await putApiKey(unlisted, fresh.key, fresh.record);
    expect(
      await budgetLiveness(
        env.API_KEYS,
        fresh.record.id,
        new TtlCache(10),
        keysChangedAtOf(env.ACCOUNTS, fresh.record.id),
        now,
      ),
    ).toBe("live");
  });
});
