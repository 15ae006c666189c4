import { env } from "cloudflare:workers";
import { Webhook } from "standardwebhooks";
import { describe, expect, it, vi } from "vitest";
import { api, errorBodyOf } from "../../support/request";
import { storeTestKey } from "../../support/test-keys";
import { pendingDeliveries, runLaneOnce, webhookOwnerOfEachTest } from "../../support/webhook-fixtures";
import { seedOrders } from "../../support/seed";

/**
 * Rotating an endpoint's signing secret (docs/api.md#webhook-endpoints): the
 * new secret shown once; for the overlap every delivery is signed with both,
 * as Standard Webhooks' own verifier (a package no one here wrote) accepts
 * with either; then with the new one alone.
 */
const owner = webhookOwnerOfEachTest();
const HOUR = 3_600_000;

const rotate = (id: string, body?: unknown, key = owner.key) =>
  api(`/v2/webhook-endpoints/${id}/rotate-secret`, {
    method: "POST",
    key,
    ...(body !== undefined && { headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) }),
  });

/**
 * One attempt of the delivery of event `seq` at `now`, the lane's only one owed, to a receiver that keeps what it got.
 */
async function deliveredAt(
  endpointId: string,
  seq: number,
  now: number,
): Promise<{ body: string; headers: Record<string, string> }> {
  const got: { body: string; headers: Record<string, string> }[] = [];
  const fetch = (async (_url: string, init: RequestInit) => {
    got.push({ body: String(init.body), headers: Object.fromEntries(new Headers(init.headers)) });
    return new Response("ok");
  }) as unknown as typeof globalThis.fetch;
  expect(await runLaneOnce(endpointId, { fetch, now: () => now, handed: seq })).toMatchObject({ delivered: 1 });
  expect(JSON.parse(got[0]!.body)).toMatchObject({ id: `evt_${seq}` });
  return got[0]!;
}

/**
 * Whether Standard Webhooks' verifier takes the post with `secret`, on a clock at the delivery's own time (it refuses
 * stale or future timestamps).
 */
const verifies = (secret: string, post: { body: string; headers: Record<string, string> }) => {
  vi.useFakeTimers({ toFake: ["Date"], now: Number(post.headers["webhook-timestamp"]) * 1000 });
  try {
    new Webhook(secret).verify(post.body, post.headers);
    return true;
  } catch {
    return false;
  } finally {
    vi.useRealTimers();
  }
};

describe("rotating a webhook endpoint's secret", () => {
  it("shows the new secret once; deliveries verify with either secret during the overlap, then with the new one only", async () => {
    const { endpointId, secret: old, seqs } = await pendingDeliveries(owner.key, [1]);
    const before = Date.now();
    const response = await rotate(endpointId, { overlapSeconds: 3600 });
    expect(response.status).toBe(200);
    const rotated = await response.json<{ secret: string; previousSecretExpiresAt: string }>();
    expect(rotated.secret).toMatch(/^whsec_[A-Za-z0-9+/]{43}=$/);
    expect(rotated.secret).not.toBe(old);
    const until = Date.parse(rotated.previousSecretExpiresAt);
    expect(until).toBeGreaterThanOrEqual(before + HOUR);
    expect(until).toBeLessThanOrEqual(Date.now() + HOUR);

    // Within the overlap (by the delivery's clock, not the wall's): two signatures, each verifying.
    const during = await deliveredAt(endpointId, seqs[0]!, until - HOUR / 2);
    expect(during.headers["webhook-signature"]!.split(" ")).toHaveLength(2);
    expect([verifies(rotated.secret, during), verifies(old, during)]).toEqual([true, true]);

    await seedOrders([{ id: 2 }]);
    const after = await deliveredAt(endpointId, seqs[0]! + 1, until + 1);
    expect(after.headers["webhook-signature"]!.split(" ")).toHaveLength(1);
    expect([verifies(rotated.secret, after), verifies(old, after)]).toEqual([true, false]);

    expect(await (await api(`/v2/webhook-endpoints/${endpointId}`, { key: owner.key })).json()).not.toHaveProperty(
      "secret",
    );
    const audit = await env.DB.prepare(
      "SELECT operation, actor FROM webhook_endpoint_events WHERE endpoint_id = ?1 AND operation <> 'create'",
    )
      .bind(endpointId)
      .all();
    expect(audit.results).toEqual([{ operation: "rotate_secret", actor: `key:${owner.record.id}` }]);
  });

  it("keeps the old secret a day without a body, not at all with an overlap of 0", async () => {
    const { endpointId, secret: old, seqs } = await pendingDeliveries(owner.key, [3]);
    const before = Date.now();
    const byDefault = await (await rotate(endpointId)).json<{ previousSecretExpiresAt: string }>();
    expect(Date.parse(byDefault.previousSecretExpiresAt)).toBeGreaterThanOrEqual(before + 24 * HOUR);

    const none = await (await rotate(endpointId, { overlapSeconds: 0 })).json<{ secret: string }>();
    const post = await deliveredAt(endpointId, seqs[0]!, Date.now());
    expect([verifies(none.secret, post), verifies(old, post)]).toEqual([true, false]);
  });

  it("refuses an overlap over a week, another account's endpoint, and a key without the scope", async () => {
    const { endpointId } = await pendingDeliveries(owner.key, []);
    expect((await errorBodyOf(await rotate(endpointId, { overlapSeconds: 7 * 86_400 + 1 }))).code).toBe("invalid_body");
    const stranger = await storeTestKey({ scopes: ["webhooks:manage"] });
    expect((await errorBodyOf(await rotate(endpointId, {}, stranger.key))).code).toBe("webhook_endpoint_not_found");
    const reader = await storeTestKey({ scopes: ["orders:read"] });
    expect((await errorBodyOf(await rotate(endpointId, {}, reader.key))).code).toBe("insufficient_scope");
  });
});

describe("a rotation retried during its overlap", () => {
  it("keeps the secret the receiver holds signing, replacing only the newest it never saw", async () => {
    const { endpointId, secret: held, seqs } = await pendingDeliveries(owner.key, [4]);
    await rotate(endpointId, { overlapSeconds: 3600 });
    // The answer was lost: the owner asks again.
    const again = await (await rotate(endpointId, { overlapSeconds: 3600 })).json<{
      secret: string;
      previousSecretExpiresAt: string;
    }>();
    const post = await deliveredAt(endpointId, seqs[0]!, Date.parse(again.previousSecretExpiresAt) - HOUR / 2);
    expect([verifies(again.secret, post), verifies(held, post)]).toEqual([true, true]);
  });
});
