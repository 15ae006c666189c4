import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { forgetIsolateMemory } from "../../../src/app/isolate-memory";
import { ownerName, pointerName } from "../../../src/keys/kv-layout";
import { findKeyById } from "../../../src/keys/lookup";
import { sha256Hex } from "../../../src/lib/digest";
import { accountsChangedAfterRead, edgeKv } from "../../support/faults";
import { at, onAFakeClock, setClock } from "../../support/limits-clock";
import { apiWith } from "../../support/request";
import { storeTestKey, type TestKey } from "../../support/test-keys";

/**
 * Decisions about a key read its account's object, never a copy: another location whose KV still shows a key as it was
 * a minute ago (edgeKv) decides as the object does (docs/design/rate-limits.md#key-state).
 */
const ALL = ["orders:read", "orders:write", "webhooks:manage", "keys:manage"] as const;
const TOKEN = "operator-token-for-tests";

onAFakeClock();

/** Another location: its own isolate, its KV's copies of the key read before the change. */
async function elsewhere(...keys: TestKey[]): Promise<Env> {
  const edge = edgeKv();
  for (const key of keys) await edge.seen(pointerName(await sha256Hex(key.key)), ownerName(key.record.id));
  return { ...env, API_KEYS: edge.kv };
}
const admin = (bindings: Env, path: string, method: string, body?: unknown) =>
  apiWith(bindings, `/admin${path}`, {
    method,
    key: null,
    headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
const asKey = (bindings: Env, key: TestKey, path: string, method = "GET", body?: unknown) =>
  apiWith(bindings, path, {
    method,
    key: key.key,
    headers: { "Content-Type": "application/json" },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });

describe("a key changed at one location, asked about at another whose KV lags", () => {
  it("stays revoked when a key of its account, or an operator, rotates it there", async () => {
    setClock(0);
    const owner = await storeTestKey({ scopes: [...ALL] });
    const sibling = await storeTestKey({ scopes: [...ALL], budget: owner.record.id });
    const there = await elsewhere(owner, sibling);
    expect((await admin(env, `/keys/${owner.record.id}/revoke`, "POST", {})).status).toBe(200);
    forgetIsolateMemory();
    expect((await asKey(there, sibling, `/v2/keys/${owner.record.id}/rotate`, "POST", {})).status).toBe(404);
    expect((await admin(there, `/keys/${owner.record.id}/rotate`, "POST", {})).status).toBe(404);
    const stored = (await findKeyById(env, owner.record.id))!;
    expect(stored.revokedAt).toBeDefined();
    expect(stored.rotatedTo).toBeUndefined();
    setClock(6);
    expect((await asKey(there, owner, "/v1/store/orders")).status).toBe(401);
  });

  it.each([
    ["revoked", (key: TestKey) => admin(env, `/keys/${key.record.id}/revoke`, "POST", {})],
    [
      "rotated away with no grace",
      (key: TestKey) => admin(env, `/keys/${key.record.id}/rotate`, "POST", { graceSeconds: 0 }),
    ],
    [
      "made to expire in a second",
      (key: TestKey) => admin(env, `/keys/${key.record.id}`, "PATCH", { expiresAt: new Date(at(1)).toISOString() }),
    ],
  ])("asks for nothing that succeeds once %s", async (_, change) => {
    setClock(0);
    const key = await storeTestKey({ scopes: [...ALL] });
    const there = await elsewhere(key);
    expect((await asKey(there, key, "/v1/store/orders")).status).toBe(200);
    expect((await change(key)).status).toBeLessThan(300);
    forgetIsolateMemory();
    setClock(2);
    for (const [path, method, body] of [
      ["/v1/store/orders", "GET"],
      ["/v2/keys", "GET"],
      ["/v2/webhook-endpoints", "POST", { url: "https://receiver.example/stale" }],
      [`/v2/keys/${key.record.id}/rotate`, "POST", {}],
    ] as const) {
      const response = await asKey(there, key, path, method, body);
      expect(response.status, `${method} ${path}`).toBe(401);
    }
  });

  it("refuses a key rotated away at another location revoking another key, while its word here is a lease old", async () => {
    setClock(0);
    const owner = await storeTestKey({ scopes: [...ALL] });
    const sibling = await storeTestKey({ scopes: [...ALL], budget: owner.record.id });
    // This isolate holds the account's word on the owner's key (live, not rotated) with a lease to spend: the
    // requests of a busy key.
    for (let request = 0; request < 30; request++) {
      setClock(request / 10);
      expect((await asKey(env, owner, "/v2/keys")).status).toBe(200);
    }
    // Rotated elsewhere, with a grace: the key's holder (maybe whoever leaked it) may act only on itself.
    const rotation = await env.ACCOUNTS.getByName(owner.record.id).rotateKey(
      owner.record.id,
      { id: "key_RotatedElsewhere", start: "so_test_AAAA", createdAt: new Date(at(3)).toISOString() },
      new Date(at(600)).toISOString(),
    );
    expect(rotation.kind).toBe("rotated");
    setClock(3.1);
    const refused = await asKey(env, owner, `/v2/keys/${sibling.record.id}/revoke`, "POST", {});
    expect(refused.status).toBe(403);
    expect(await refused.json()).toMatchObject({
      code: "key_acts_only_on_itself",
      message: expect.stringContaining("not on another key of its account"),
    });
    expect((await findKeyById(env, sibling.record.id))!.revokedAt).toBeUndefined();
    // Itself it may still revoke.
    expect((await asKey(env, owner, `/v2/keys/${owner.record.id}/revoke`, "POST", {})).status).toBe(200);
  });

  it("keeps the end an update gave a key when another location writes its lagging record back", async () => {
    setClock(0);
    const key = await storeTestKey({ scopes: [...ALL] });
    const there = await elsewhere(key);
    const end = new Date(at(3600)).toISOString();
    expect((await admin(env, `/keys/${key.record.id}`, "PATCH", { expiresAt: end })).status).toBe(200);
    forgetIsolateMemory();
    expect((await admin(there, `/keys/${key.record.id}`, "PATCH", { name: "renamed there" })).status).toBe(200);
    expect((await findKeyById(env, key.record.id))!).toMatchObject({
      name: "renamed there",
      expiresAt: end,
    });
  });

  it("meets the limits an operator set at once: the account's object, not the record the location holds", async () => {
    setClock(0);
    const key = await storeTestKey({ plan: "free" });
    const there = await elsewhere(key);
    expect((await asKey(there, key, "/v1/store/orders")).headers.get("X-RateLimit-Limit")).toBe("60");
    setClock(0.5);
    expect((await admin(env, `/keys/${key.record.id}`, "PATCH", { plan: "business" })).status).toBe(200);
    forgetIsolateMemory();
    setClock(1);
    expect((await asKey(there, key, "/v1/store/orders")).headers.get("X-RateLimit-Limit")).toBe("1000");
  });

  it("answers and audits a revocation with the time the account keeps, when another writer's landed first", async () => {
    const owner = await storeTestKey({ scopes: [...ALL] });
    const other = await storeTestKey({ scopes: ["orders:read"], budget: owner.record.id });
    const first = new Date(at(0)).toISOString();
    // Another writer's revocation lands after this call read the key and before it revokes it.
    const racing = accountsChangedAfterRead(async (account, keyId) => {
      if (keyId === other.record.id) await account.revokeKey(keyId, "retired", first);
    });
    setClock(30);
    const revoked = await asKey({ ...env, ACCOUNTS: racing }, owner, `/v2/keys/${other.record.id}/revoke`, "POST", {});
    expect(revoked.status).toBe(200);
    expect(await revoked.json()).toMatchObject({ id: other.record.id, revokedAt: first, reason: "retired" });
    // Its audit row says the same.
    const row = await env.DB.prepare("SELECT changes FROM key_events WHERE key_id = ?1 AND operation = 'revoke'")
      .bind(other.record.id)
      .first<{ changes: string }>();
    expect(JSON.parse(row!.changes)).toMatchObject({ revokedAt: first, reason: "retired" });
  });
});
