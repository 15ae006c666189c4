import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, errorBodyOf, ORIGIN } from "../../support/request";
import { storeTestKey, type TestKey } from "../../support/test-keys";

/**
 * An account's own keys (docs/api.md#authentication): listed, the calling one rotated with a grace period, one revoked
 * early.
 */
const manager = () => storeTestKey({ scopes: ["orders:read", "keys:manage"] });
const rotate = ({ key, record }: TestKey, body?: unknown, keyId = record.id) =>
  api(`/v2/keys/${keyId}/rotate`, {
    method: "POST",
    key,
    ...(body !== undefined && { headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) }),
  });

interface Rotated {
  key: string;
  id: string;
  start: string;
  previous: { id: string; expiresAt: string };
}

describe("a key's own account", () => {
  it("rotates the calling key: a new key shown once, the same account and scopes; the old key works through the grace, and both are listed", async () => {
    const old = await manager();
    const response = await rotate(old, { graceSeconds: 3_600 });
    expect(response.status).toBe(201);
    const rotated = await response.json<Rotated>();
    expect(rotated.key).toMatch(/^so_test_[0-9A-Za-z]{38}$/);
    expect(rotated.start).toBe(rotated.key.slice(0, 12));
    expect(rotated.previous.id).toBe(old.record.id);
    expect(Math.abs(Date.parse(rotated.previous.expiresAt) - (Date.now() + 3_600_000))).toBeLessThan(10_000);
    // Both work now, counted against one account.
    const usageOld = await api("/v2/console/session", { key: old.key });
    const usageNew = await api("/v2/console/session", { key: rotated.key });
    expect((await usageOld.json<{ key: { budget: string } }>()).key.budget).toBe(old.record.id);
    const fresh = await usageNew.json<{ key: { budget: string; scopes: string[] } }>();
    expect(fresh.key).toMatchObject({ budget: old.record.id, scopes: ["orders:read", "keys:manage"] });
    const listed = await (await api("/v2/keys", { key: rotated.key })).json<{
      data: { id: string; current: boolean; expiresAt: string | null; usable: boolean }[];
    }>();
    expect(listed.data.map((key) => [key.id, key.current, key.usable])).toEqual([
      [rotated.id, true, true],
      [old.record.id, false, true],
    ]);
    expect(JSON.stringify(listed)).not.toContain(rotated.key);
    const audit = await env.DB.prepare(
      "SELECT operation, key_id, actor FROM key_events WHERE key_id IN (?1, ?2) ORDER BY id",
    )
      .bind(old.record.id, rotated.id)
      .all();
    expect(audit.results).toEqual([
      { operation: "rotate", key_id: old.record.id, actor: `key:${old.record.id}` },
      { operation: "create", key_id: rotated.id, actor: `key:${old.record.id}` },
    ]);
  });

  it("revokes the old key early, from the new one; another account's key is not found; revoking twice answers alike", async () => {
    const old = await manager();
    const rotated = await (await rotate(old)).json<Rotated>();
    const revoked = await api(`/v2/keys/${old.record.id}/revoke`, { method: "POST", key: rotated.key });
    expect(revoked.status).toBe(200);
    const { revokedAt } = await revoked.json<{ revokedAt: string }>();
    expect((await api("/v2/console/session", { key: old.key })).status).toBe(401);
    const again = await api(`/v2/keys/${old.record.id}/revoke`, { method: "POST", key: rotated.key });
    expect((await again.json<{ revokedAt: string }>()).revokedAt).toBe(revokedAt);
    const stranger = await storeTestKey();
    expect(
      (await errorBodyOf(await api(`/v2/keys/${stranger.record.id}/revoke`, { method: "POST", key: rotated.key })))
        .code,
    ).toBe("key_not_found");
    expect((await api("/v2/console/session", { key: stranger.key })).status).toBe(200);
  });

  it("refuses a key revoked in this isolate from its next request, even while the isolate holds admissions of its account's lease", async () => {
    const old = await manager();
    const rotated = await (await rotate(old)).json<Rotated>();
    // A busy key: the isolate is granted admissions ahead, which it spends without asking the account's object.
    for (let i = 0; i < 20; i++) expect((await api("/v2/keys", { key: old.key })).status).toBe(200);
    expect((await api(`/v2/keys/${old.record.id}/revoke`, { method: "POST", key: rotated.key })).status).toBe(200);
    expect((await api("/v2/keys", { key: old.key })).status).toBe(401);
    expect((await api("/v2/keys", { key: rotated.key })).status).toBe(200);
  });

  it("needs keys:manage, and says so", async () => {
    const plain = await storeTestKey({ scopes: ["orders:read"] });
    for (const response of [
      await rotate(plain),
      await api("/v2/keys", { key: plain.key }),
      await api(`/v2/keys/${plain.record.id}/revoke`, { method: "POST", key: plain.key }),
    ]) {
      const error = await errorBodyOf(response);
      expect(error.code).toBe("insufficient_scope");
      expect(error.message).toContain("keys:manage");
    }
  });

  it("refuses a grace longer than a week, a key that is not valid any more, and a key of another account", async () => {
    const key = await manager();
    expect((await errorBodyOf(await rotate(key, { graceSeconds: 604_801 }))).code).toBe("invalid_body");
    const next = await (await rotate(key, { graceSeconds: 0 })).json<Rotated>();
    // A rotation without grace ends the old key at once: its account's object refuses it, whatever a cached
    // record says.
    expect((await errorBodyOf(await rotate(key))).code).toBe("invalid_api_key");
    // The new key cannot rotate the old one again, nor another account's.
    const nextKey = { key: next.key, record: { ...key.record, id: next.id } };
    expect((await errorBodyOf(await rotate(nextKey, {}, key.record.id))).code).toBe("key_not_found");
    const stranger = await storeTestKey();
    expect((await errorBodyOf(await rotate(nextKey, {}, stranger.record.id))).code).toBe("key_not_found");
  });
});

describe("a key in its grace period (rotated away), or one that expires", () => {
  it("cannot take the account over: it may neither rotate nor revoke the key that replaced it, with its key or a console session of it", async () => {
    const leaked = await manager();
    const replacement = await (await rotate(leaked, { graceSeconds: 86_400 })).json<Rotated>();
    // Whoever holds the leaked key tries the takeover: rotate the replacement with no grace, for a key that never
    // expires.
    const takeover = await rotate(leaked, { graceSeconds: 0 }, replacement.id);
    expect(takeover.status).toBe(403);
    expect(takeover.headers.get("WWW-Authenticate")).toContain('error="insufficient_scope"');
    expect(await errorBodyOf(takeover)).toMatchObject({
      code: "key_acts_only_on_itself",
      message: expect.stringContaining("may act only on itself"),
    });
    expect(
      (await errorBodyOf(await api(`/v2/keys/${replacement.id}/revoke`, { method: "POST", key: leaked.key }))).code,
    ).toBe("key_acts_only_on_itself");
    // A console session of the leaked key is refused alike.
    const session = await api("/v2/console/session", { method: "POST", key: leaked.key, headers: { Origin: ORIGIN } });
    const cookie = session.headers.get("Set-Cookie")!.split(";")[0]!;
    const fromSession = await api(`/v2/keys/${replacement.id}/rotate`, {
      method: "POST",
      key: null,
      headers: { Cookie: cookie, Origin: ORIGIN },
    });
    expect((await errorBodyOf(fromSession)).code).toBe("key_acts_only_on_itself");
    // The replacement still works, and nothing was audited for the refusals.
    expect((await api("/v2/keys", { key: replacement.key })).status).toBe(200);
    const audit = await env.DB.prepare("SELECT operation FROM key_events WHERE key_id = ?1").bind(replacement.id).all();
    expect(audit.results).toEqual([{ operation: "create" }]);
  });

  it("is refused webhook endpoints in the step that admits it, before the operation reads its path or body", async () => {
    const leaked = await storeTestKey({ scopes: ["orders:read", "webhooks:manage", "keys:manage"] });
    expect((await rotate(leaked, { graceSeconds: 86_400 })).status).toBe(201);
    // Neither an id that names no endpoint (404, where the old guard came after it) nor a body not JSON (415).
    for (const [path, method] of [
      ["/v2/webhook-endpoints/not-an-endpoint", "PATCH"],
      ["/v2/webhook-endpoints", "POST"],
    ] as const) {
      const refused = await api(path, {
        method,
        key: leaked.key,
        body: "{",
        headers: { "Content-Type": "text/plain" },
      });
      expect(await errorBodyOf(refused)).toMatchObject({ status: 403, code: "key_acts_only_on_itself" });
    }
    // Reading them stays open.
    expect((await api("/v2/webhook-endpoints", { key: leaked.key })).status).toBe(200);
  });

  it("gets nothing kept of an endpoint it made before its rotation: its retry is refused as a new write would be", async () => {
    const owner = await storeTestKey({ scopes: ["orders:read", "webhooks:manage", "keys:manage"] });
    const make = {
      method: "POST",
      key: owner.key,
      body: JSON.stringify({ url: "https://kept.example/hooks" }),
      headers: { "Content-Type": "application/json", "Idempotency-Key": "make-it-once" },
    };
    const made = await (await api("/v2/webhook-endpoints", make)).json<{ id: string; secret: string }>();
    expect((await (await api("/v2/webhook-endpoints", make)).json<{ id: string }>()).id).toBe(made.id);
    expect((await rotate(owner, { graceSeconds: 86_400 })).status).toBe(201);
    // The kept answer holds the endpoint's signing secret: a key that may be whoever leaked it does not get it again.
    const retried = await api("/v2/webhook-endpoints", make);
    expect(await errorBodyOf(retried)).toMatchObject({ status: 403, code: "key_acts_only_on_itself" });
  });

  it("may revoke itself, and make no key, not even by rotating itself: the new key would not be rotated away", async () => {
    const leaked = await manager();
    const replacement = await (await rotate(leaked, { graceSeconds: 86_400 })).json<Rotated>();
    expect(await errorBodyOf(await rotate(leaked, { graceSeconds: 0 }))).toMatchObject({
      status: 403,
      code: "key_acts_only_on_itself",
    });
    expect((await api(`/v2/keys/${leaked.record.id}/revoke`, { method: "POST", key: leaked.key })).status).toBe(200);
    expect((await api("/v2/keys", { key: replacement.key })).status).toBe(200);
  });

  it("made to expire and never rotated, rotates itself into a key that stops when it would have", async () => {
    const expiring = await storeTestKey({
      scopes: ["orders:read", "keys:manage"],
      expiresAt: new Date(Date.now() + 86_400_000).toISOString(),
    });
    const itself = await rotate(expiring, { graceSeconds: 0 });
    expect(itself.status).toBe(201);
    const again = await itself.json<Rotated & { expiresAt: string | null }>();
    expect(again.expiresAt).toBe(expiring.record.expiresAt);
    // The new key, expiring too, acts only on itself.
    expect(
      await errorBodyOf(
        await rotate({ key: again.key, record: { ...expiring.record, id: again.id } }, {}, expiring.record.id),
      ),
    ).toMatchObject({ code: "key_acts_only_on_itself" });
  });
});
