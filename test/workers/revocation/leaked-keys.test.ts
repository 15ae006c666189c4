import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { findKeyById } from "../../../src/keys/lookup";
import { pruneEndpointAudit } from "../../../src/webhook-delivery/endpoint-audit-rows";
import { forgetIsolateMemory } from "../../../src/app/isolate-memory";
import { updateEndpoint } from "../../../src/webhook-delivery/endpoint-table";
import { interceptD1, staleKeyKv } from "../../support/faults";
import { api, apiWith, errorBodyOf, ORIGIN } from "../../support/request";
import { storeTestKey, type TestKey } from "../../support/test-keys";
import {
  dispatchQuietly,
  freshWebhookOwner,
  laneDeliveries,
  makeEndpoint,
  receivers,
  runLaneOnce,
  withoutDispatcher,
} from "../../support/webhook-fixtures";
import { seedOrders } from "../../support/seed";

/**
 * A key revoked as leaked ends what it started (docs/api.md#what-a-leak-ends),
 * and who may act is decided by the account's object, never by a KV read that
 * may be a minute old (docs/design/rate-limits.md#key-state).
 */
const OWNER_SCOPES = ["orders:read", "orders:write", "webhooks:manage", "keys:manage"] as const;
const json = (body: unknown) => ({ headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) });
const bindings = withoutDispatcher();
const call = (path: string, key: string, init: RequestInit = {}) => apiWith(bindings, path, { key, ...init });

interface Rotated {
  key: string;
  id: string;
}

/** A key with every scope, and the key a rotation by it made (the leaked key's holder, and the owner's new key). */
async function leakedAndReplacement(graceSeconds = 86_400): Promise<{ leaked: TestKey; replacement: Rotated }> {
  const leaked = await storeTestKey({ scopes: [...OWNER_SCOPES] });
  const rotated = await call(`/v2/keys/${leaked.record.id}/rotate`, leaked.key, {
    method: "POST",
    ...json({ graceSeconds }),
  });
  expect(rotated.status).toBe(201);
  return { leaked, replacement: await rotated.json<Rotated>() };
}

const endpoint = (key: string, id: string) =>
  call(`/v2/webhook-endpoints/${id}`, key).then((response) => response.json<Record<string, unknown>>());

beforeEach(async () => {
  await freshWebhookOwner();
});

describe("a key revoked as leaked", () => {
  it("disables every endpoint it made, re-pointed or re-secreted, naming itself, and leaves the owner's alone", async () => {
    const leaked = await storeTestKey({ scopes: [...OWNER_SCOPES] });
    const owner = await storeTestKey({ scopes: [...OWNER_SCOPES], budget: leaked.record.id });
    const planted = await makeEndpoint(leaked.key, { url: "https://attacker.example/planted" });
    const ownersRepointed = await makeEndpoint(owner.key, { url: "https://receiver.example/mine" });
    expect(
      (
        await call(`/v2/webhook-endpoints/${ownersRepointed.id}`, leaked.key, {
          method: "PATCH",
          ...json({ url: "https://attacker.example/moved" }),
        })
      ).status,
    ).toBe(200);
    const ownersResecreted = await makeEndpoint(owner.key, { url: "https://receiver.example/resecreted" });
    expect(
      (await call(`/v2/webhook-endpoints/${ownersResecreted.id}/rotate-secret`, leaked.key, { method: "POST" })).status,
    ).toBe(200);
    const ownersOwn = await makeEndpoint(owner.key, { url: "https://receiver.example/untouched" });
    // The leaked key made this one, but the owner has since set its URL and rotated its secret, and its types were
    // never the leaked key's alone.
    const reclaimed = await makeEndpoint(leaked.key, { url: "https://attacker.example/reclaimed" });
    expect(
      (
        await call(`/v2/webhook-endpoints/${reclaimed.id}`, owner.key, {
          method: "PATCH",
          ...json({ url: "https://receiver.example/reclaimed", types: ["order.cancelled"] }),
        })
      ).status,
    ).toBe(200);
    expect(
      (await call(`/v2/webhook-endpoints/${reclaimed.id}/rotate-secret`, owner.key, { method: "POST" })).status,
    ).toBe(200);
    // An order event is waiting for each endpoint when the leak is found.
    await seedOrders([{ id: 4_100 }]);
    await dispatchQuietly();

    const revoked = await call(`/v2/keys/${leaked.record.id}/revoke`, owner.key, {
      method: "POST",
      ...json({ reason: "leaked" }),
    });
    expect(revoked.status).toBe(200);
    const body = await revoked.json<{ reason: string; leak: { endpointsDisabled: string[] } }>();
    expect(body.reason).toBe("leaked");
    expect(body.leak.endpointsDisabled.sort()).toEqual([planted.id, ownersRepointed.id, ownersResecreted.id].sort());
    for (const id of [planted.id, ownersRepointed.id, ownersResecreted.id]) {
      expect(await endpoint(owner.key, id)).toMatchObject({
        status: "disabled",
        disabledBy: "service",
        disabledForLeakedKey: leaked.record.id,
        disabledReason: expect.stringContaining(`the key ${leaked.record.id}`),
      });
    }
    expect(await endpoint(owner.key, ownersOwn.id)).toMatchObject({ status: "enabled", disabledForLeakedKey: null });
    // Its pending deliveries fail, and the delivery log says why.
    await runLaneOnce(planted.id, { fetch: receivers().fetch });
    const [failed] = await laneDeliveries(planted.id);
    const why = `the key ${leaked.record.id}, which made or aimed it, was revoked as leaked`;
    expect(failed).toMatchObject({
      outcome: "failed",
      last_error: `the endpoint is disabled: ${why}`,
    });
    expect(await endpoint(owner.key, reclaimed.id)).toMatchObject({ status: "enabled" });
    // The disabling is in each endpoint's audit, by whoever revoked the key.
    const audit = await env.DB.prepare(
      "SELECT actor, changes FROM webhook_endpoint_events WHERE endpoint_id = ?1 AND operation = 'disable'",
    )
      .bind(planted.id)
      .first<{ actor: string; changes: string }>();
    expect(audit).toEqual({
      actor: `key:${owner.record.id}`,
      changes: JSON.stringify({ leakedKey: leaked.record.id }),
    });
  });

  it("is enabled again by its owner only with the URL it will deliver to confirmed, and recovers the window since the leak", async () => {
    const leaked = await storeTestKey({ scopes: [...OWNER_SCOPES] });
    const owner = await storeTestKey({ scopes: [...OWNER_SCOPES], budget: leaked.record.id });
    const planted = await makeEndpoint(leaked.key, { url: "https://receiver.example/planted" });
    expect(
      (await call(`/v2/keys/${leaked.record.id}/revoke`, owner.key, { method: "POST", ...json({ reason: "leaked" }) }))
        .status,
    ).toBe(200);
    const enable = (extra: Record<string, unknown>) =>
      call(`/v2/webhook-endpoints/${planted.id}`, owner.key, {
        method: "PATCH",
        ...json({ status: "enabled", ...extra }),
      });
    const unconfirmed = await enable({});
    expect(await errorBodyOf(unconfirmed)).toMatchObject({
      status: 409,
      code: "webhook_url_unconfirmed",
      message: expect.stringContaining("https://receiver.example/planted"),
    });
    expect(await errorBodyOf(await enable({ confirmUrl: "https://receiver.example/other" }))).toMatchObject({
      code: "webhook_url_unconfirmed",
    });
    expect(await endpoint(owner.key, planted.id)).toMatchObject({ status: "disabled" });
    // Nothing was done, so no audit row stays for the refusals.
    expect(
      await env.DB.prepare(
        "SELECT count(*) AS n FROM webhook_endpoint_events WHERE endpoint_id = ?1 AND operation = 'update'",
      )
        .bind(planted.id)
        .first<number>("n"),
    ).toBe(0);
    const enabled = await enable({ confirmUrl: "https://receiver.example/planted" });
    expect(enabled.status).toBe(200);
    expect(await enabled.json()).toMatchObject({ status: "enabled", disabledForLeakedKey: null, disabledReason: null });
    const recovered = await call(`/v2/webhook-endpoints/${planted.id}/recover`, owner.key, {
      method: "POST",
      ...json({ since: new Date(Date.now() - 60_000).toISOString() }),
    });
    expect(recovered.status).toBe(202);
    // An endpoint disabled otherwise is enabled again as before, without confirmUrl.
    const own = await makeEndpoint(owner.key, { url: "https://receiver.example/own" });
    expect(
      (await call(`/v2/webhook-endpoints/${own.id}`, owner.key, { method: "PATCH", ...json({ status: "disabled" }) }))
        .status,
    ).toBe(200);
    expect(
      (await call(`/v2/webhook-endpoints/${own.id}`, owner.key, { method: "PATCH", ...json({ status: "enabled" }) }))
        .status,
    ).toBe(200);
  });

  it("ends its console sessions and names the keys it made by rotation, in the answer, the audit and the account's key list", async () => {
    const { leaked, replacement } = await leakedAndReplacement();
    const signedIn = await api("/v2/console/session", { method: "POST", key: leaked.key, headers: { Origin: ORIGIN } });
    expect(signedIn.status).toBe(201);
    const cookie = signedIn.headers.get("Set-Cookie")!.split(";")[0]!;
    const revoked = await call(`/v2/keys/${leaked.record.id}/revoke`, replacement.key, {
      method: "POST",
      ...json({ reason: "leaked" }),
    });
    expect(await revoked.json()).toMatchObject({
      reason: "leaked",
      leak: { rotatedInto: [replacement.id] },
    });
    const row = await env.DB.prepare("SELECT changes, actor FROM key_events WHERE key_id = ?1 AND operation = 'revoke'")
      .bind(leaked.record.id)
      .first<{ changes: string; actor: string }>();
    expect(row!.actor).toBe(`key:${replacement.id}`);
    expect(JSON.parse(row!.changes)).toMatchObject({
      reason: "leaked",
      rotatedInto: [replacement.id],
      leakedAt: expect.any(String),
    });
    forgetIsolateMemory();
    expect(
      await errorBodyOf(await api("/v2/keys", { key: null, headers: { Cookie: cookie, Origin: ORIGIN } })),
    ).toMatchObject({ status: 401, code: "session_ended", message: expect.stringContaining("its key was revoked") });
    // The replacement still works: it is never revoked silently, only named.
    const listed = await call("/v2/keys", replacement.key).then((response) =>
      response.json<{ data: Record<string, unknown>[] }>(),
    );
    expect(listed.data.find((key) => key.id === leaked.record.id)).toMatchObject({
      revokedReason: "leaked",
      leak: { rotatedInto: [replacement.id], leakedAt: expect.any(String) },
    });
    expect(listed.data.find((key) => key.id === replacement.id)).toMatchObject({
      usable: true,
      madeByLeakedKey: leaked.record.id,
    });
  });

  it("is revoked as retired by default, and a key retired may be revoked again as leaked: the leak ends then", async () => {
    const leaked = await storeTestKey({ scopes: [...OWNER_SCOPES] });
    const owner = await storeTestKey({ scopes: [...OWNER_SCOPES], budget: leaked.record.id });
    const planted = await makeEndpoint(leaked.key, { url: "https://attacker.example/late" });
    const retired = await call(`/v2/keys/${leaked.record.id}/revoke`, owner.key, { method: "POST" });
    expect(await retired.json()).toMatchObject({ reason: "retired" });
    expect(await endpoint(owner.key, planted.id)).toMatchObject({ status: "enabled" });
    const leakedLate = await call(`/v2/keys/${leaked.record.id}/revoke`, owner.key, {
      method: "POST",
      ...json({ reason: "leaked" }),
    });
    expect(await leakedLate.json()).toMatchObject({ reason: "leaked", leak: { endpointsDisabled: [planted.id] } });
    expect(await endpoint(owner.key, planted.id)).toMatchObject({
      status: "disabled",
      disabledForLeakedKey: leaked.record.id,
    });
    // Asked again, nothing more ends: an endpoint its owner enabled since stays enabled.
    expect(
      (
        await call(`/v2/webhook-endpoints/${planted.id}`, owner.key, {
          method: "PATCH",
          ...json({ status: "enabled", confirmUrl: "https://attacker.example/late" }),
        })
      ).status,
    ).toBe(200);
    const again = await call(`/v2/keys/${leaked.record.id}/revoke`, owner.key, {
      method: "POST",
      ...json({ reason: "leaked" }),
    });
    expect(await again.json()).not.toHaveProperty("leak");
    expect(await endpoint(owner.key, planted.id)).toMatchObject({ status: "enabled" });
  });

  it("disables the endpoints of the keys it made by rotation too: whoever held it may hold them", async () => {
    const { leaked, replacement } = await leakedAndReplacement(86_400);
    const owner = await storeTestKey({ scopes: [...OWNER_SCOPES], budget: leaked.record.id });
    const plantedByMade = await makeEndpoint(replacement.key, { url: "https://attacker.example/by-the-made-key" });
    const ownersOwn = await makeEndpoint(owner.key, { url: "https://receiver.example/owners" });
    const revoked = await call(`/v2/keys/${leaked.record.id}/revoke`, owner.key, {
      method: "POST",
      ...json({ reason: "leaked" }),
    });
    expect(await revoked.json()).toMatchObject({
      leak: { endpointsDisabled: [plantedByMade.id], rotatedInto: [replacement.id] },
    });
    expect(await endpoint(owner.key, ownersOwn.id)).toMatchObject({ status: "enabled" });
  });

  it("never lets the leaked key itself enable an endpoint disabled for it, whatever URL it confirms", async () => {
    const leaked = await storeTestKey({ scopes: [...OWNER_SCOPES] });
    const owner = await storeTestKey({ scopes: [...OWNER_SCOPES], budget: leaked.record.id });
    const planted = await makeEndpoint(leaked.key, { url: "https://attacker.example/again" });
    expect(
      (await call(`/v2/keys/${leaked.record.id}/revoke`, owner.key, { method: "POST", ...json({ reason: "leaked" }) }))
        .status,
    ).toBe(200);
    // A PATCH of the leaked key's that passed its checks just before the revocation, landing after it.
    const enable = { status: "enabled" as const, confirmedUrl: "https://attacker.example/again" };
    const late = await updateEndpoint(
      env.DB,
      leaked.record.id,
      planted.id,
      { ...enable, keyId: leaked.record.id },
      new Date().toISOString(),
    );
    expect(late).toMatchObject({ locked: true, row: { status: "disabled", disabled_for_leak: leaked.record.id } });
    const byOwner = await updateEndpoint(
      env.DB,
      leaked.record.id,
      planted.id,
      { ...enable, keyId: owner.record.id },
      new Date().toISOString(),
    );
    expect(byOwner).toMatchObject({ locked: false, row: { status: "enabled", disabled_for_leak: null } });
  });

  it("is revoked as leaked through the operator API too, with where it was found", async () => {
    const leaked = await storeTestKey({ scopes: [...OWNER_SCOPES] });
    const planted = await makeEndpoint(leaked.key, { url: "https://attacker.example/ops" });
    const response = await apiWith(bindings, `/admin/keys/${leaked.record.id}/revoke`, {
      method: "POST",
      key: "operator-token-for-tests",
      ...json({ reason: "leaked", foundAt: "https://paste.example/abc" }),
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toMatchObject({ reason: "leaked", leak: { endpointsDisabled: [planted.id] } });
    const row = await env.DB.prepare("SELECT changes FROM key_events WHERE key_id = ?1 AND operation = 'revoke'")
      .bind(leaked.record.id)
      .first<string>("changes");
    expect(JSON.parse(row!)).toMatchObject({ foundAt: "https://paste.example/abc", reason: "leaked" });
  });
});

/** The bindings, with KV answering as it did before the key changed (test/support/faults.ts). */
const staleFor = async (key: TestKey): Promise<Env> => ({ ...bindings, API_KEYS: await staleKeyKv(key) });

describe("a leaked key's revocation, racing a change the key made just before", () => {
  it("looks for what the key started twice: an endpoint whose audit row lands after the first look is disabled too", async () => {
    const leaked = await storeTestKey({ scopes: [...OWNER_SCOPES] });
    const owner = await storeTestKey({ scopes: [...OWNER_SCOPES], budget: leaked.record.id });
    const late = await makeEndpoint(leaked.key, { url: "https://attacker.example/late" });
    // The first look at the endpoints does not see the new one yet (its request was still committing).
    let looks = 0;
    const racing = interceptD1({
      prepare: (statement, sql) => {
        if (!sql.includes("url_set_by IN")) return statement;
        const first = looks++ === 0;
        return {
          bind: (...values: unknown[]) => {
            const bound = statement.bind(...values);
            return {
              all: async <T>() => {
                const answer = await bound.all<T & { id: string }>();
                return first ? { ...answer, results: answer.results.filter((r) => r.id !== late.id) } : answer;
              },
            };
          },
        } as unknown as D1PreparedStatement;
      },
    });
    const revoked = await apiWith({ ...bindings, DB: racing }, `/v2/keys/${leaked.record.id}/revoke`, {
      key: owner.key,
      method: "POST",
      ...json({ reason: "leaked" }),
    });
    expect(await revoked.json()).toMatchObject({ leak: { endpointsDisabled: [late.id] } });
    expect(looks).toBe(2);
    expect(await endpoint(owner.key, late.id)).toMatchObject({ status: "disabled" });
  });
});

describe("a leaked key, long after it started something", () => {
  it("disables an endpoint it made over a year ago, its audit pruned: the endpoint's row keeps who set each part", async () => {
    const leaked = await storeTestKey({ scopes: [...OWNER_SCOPES] });
    const owner = await storeTestKey({ scopes: [...OWNER_SCOPES], budget: leaked.record.id });
    const planted = await makeEndpoint(leaked.key, { url: "https://attacker.example/old" });
    const owners = await makeEndpoint(owner.key, { url: "https://receiver.example/owners" });
    // The owner later set the planted endpoint's types, and the leaked key its own URL twice: superseded rows go.
    for (const [key, id, body] of [
      [owner.key, planted.id, { types: ["order.cancelled"] }],
      [leaked.key, planted.id, { url: "https://attacker.example/older" }],
      [leaked.key, planted.id, { url: "https://attacker.example/oldest" }],
    ] as const) {
      const patched = await call(`/v2/webhook-endpoints/${id}`, key, { method: "PATCH", ...json(body) });
      expect(patched.status).toBe(200);
    }
    const rows = () =>
      env.DB.prepare("SELECT count(*) AS n FROM webhook_endpoint_events WHERE endpoint_id = ?1")
        .bind(planted.id)
        .first<number>("n");
    expect(await rows()).toBe(4);
    // A year and a day on, the audit's prune has taken every row.
    const later = Date.now() + 366 * 86_400_000;
    await pruneEndpointAudit(env.DB, later);
    expect(await rows()).toBe(0);
    const revoked = await call(`/v2/keys/${leaked.record.id}/revoke`, owner.key, {
      method: "POST",
      ...json({ reason: "leaked" }),
    });
    expect(await revoked.json()).toMatchObject({ leak: { endpointsDisabled: [planted.id] } });
    expect(await endpoint(owner.key, planted.id)).toMatchObject({ status: "disabled" });
    expect(await endpoint(owner.key, owners.id)).toMatchObject({ status: "enabled" });
  });
});

describe("a leaked key, while KV still answers its old record everywhere else", () => {
  it("rotated away with grace, acts only on itself: it cannot take over the new key, nor make, re-point or re-secret endpoints", async () => {
    const { leaked, replacement } = await leakedAndReplacement(86_400);
    const ownersEndpoint = await makeEndpoint(replacement.key, { url: "https://receiver.example/owners" });
    const stale = await staleFor(leaked);
    // Another isolate: nothing learned here about the rotation, and KV shows the record before it.
    forgetIsolateMemory();
    const send = (path: string, init: RequestInit) => apiWith(stale, path, { key: leaked.key, ...init });
    const attempts = [
      await send(`/v2/keys/${replacement.id}/rotate`, { method: "POST", ...json({ graceSeconds: 0 }) }),
      await send(`/v2/keys/${replacement.id}/revoke`, { method: "POST" }),
      await send("/v2/webhook-endpoints", { method: "POST", ...json({ url: "https://attacker.example/new" }) }),
      await send(`/v2/webhook-endpoints/${ownersEndpoint.id}`, {
        method: "PATCH",
        ...json({ url: "https://attacker.example/moved" }),
      }),
      await send(`/v2/webhook-endpoints/${ownersEndpoint.id}/rotate-secret`, { method: "POST" }),
      await send(`/v2/webhook-endpoints/${ownersEndpoint.id}`, { method: "DELETE" }),
    ];
    // Nor by rotating itself into a key that is not rotated away: it may only revoke itself.
    attempts.push(await send(`/v2/keys/${leaked.record.id}/rotate`, { method: "POST", ...json({ graceSeconds: 0 }) }));
    for (const attempt of attempts)
      expect(await errorBodyOf(attempt)).toMatchObject({ status: 403, code: "key_acts_only_on_itself" });
    expect(await endpoint(replacement.key, ownersEndpoint.id)).toMatchObject({
      url: "https://receiver.example/owners",
      status: "enabled",
    });
    // Reading stays open, and it may still act on itself.
    expect((await send("/v2/webhook-endpoints", { method: "GET" })).status).toBe(200);
  });

  it("rotated away with no grace, is refused everywhere at its next call: nothing it does succeeds", async () => {
    const { leaked, replacement } = await leakedAndReplacement(0);
    const stale = await staleFor(leaked);
    forgetIsolateMemory();
    const send = (path: string, init: RequestInit = {}) => apiWith(stale, path, { key: leaked.key, ...init });
    const attempts = [
      await send("/v1/store/orders"),
      await send(`/v2/keys/${replacement.id}/rotate`, { method: "POST", ...json({ graceSeconds: 0 }) }),
      await send("/v2/webhook-endpoints", { method: "POST", ...json({ url: "https://attacker.example/new" }) }),
      await send("/v2/console/session", { method: "POST", headers: { Origin: ORIGIN } }),
    ];
    for (const attempt of attempts)
      expect(await errorBodyOf(attempt)).toMatchObject({ status: 401, code: "invalid_api_key" });
  });

  it("rotated away with no grace, is refused at its next call in the isolate that rotated it too", async () => {
    // A steady key: this isolate holds a lease for it, and the account's word on it, when it rotates itself.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const leaked = await storeTestKey({ scopes: [...OWNER_SCOPES] });
      const start = Date.UTC(2030, 2, 10, 12, 0, 1);
      for (let i = 0; i < 20; i++) {
        vi.setSystemTime(start + i * 100);
        expect((await call("/v1/store/orders", leaked.key)).status).toBe(200);
      }
      const rotated = await call(`/v2/keys/${leaked.record.id}/rotate`, leaked.key, {
        method: "POST",
        ...json({ graceSeconds: 0 }),
      });
      const replacement = await rotated.json<Rotated>();
      vi.setSystemTime(start + 2_010);
      expect(await errorBodyOf(await call("/v1/store/orders", leaked.key))).toMatchObject({ code: "invalid_api_key" });
      expect((await call("/v1/store/orders", replacement.key)).status).toBe(200);
    } finally {
      vi.useRealTimers();
    }
  });

  it("revoked, is not made live again by a rotation from a key that still sees its old record", async () => {
    const owner = await storeTestKey({ scopes: [...OWNER_SCOPES] });
    const target = await storeTestKey({ scopes: [...OWNER_SCOPES], budget: owner.record.id });
    const revoked = await call(`/v2/keys/${target.record.id}/revoke`, owner.key, {
      method: "POST",
      ...json({ reason: "leaked" }),
    });
    expect(revoked.status).toBe(200);
    // Another isolate, where KV still shows the target live: a rotation of it is refused, and writes nothing.
    forgetIsolateMemory();
    const rotation = await apiWith(await staleFor(target), `/v2/keys/${target.record.id}/rotate`, {
      method: "POST",
      key: owner.key,
      ...json({ graceSeconds: 86_400 }),
    });
    expect(await errorBodyOf(rotation)).toMatchObject({ status: 404, code: "key_not_found" });
    const stored = await findKeyById(env, target.record.id);
    expect(stored).toMatchObject({ revokedAt: expect.any(String) });
    expect(stored?.rotatedTo).toBeUndefined();
    // An hour on, the key is still refused: the account keeps its revocation for good.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.now() + 3_600_000);
      forgetIsolateMemory();
      expect(await errorBodyOf(await call("/v1/store/orders", target.key))).toMatchObject({ code: "invalid_api_key" });
    } finally {
      vi.useRealTimers();
    }
  });

  it("revoked, is refused everywhere at its next call", async () => {
    const { leaked, replacement } = await leakedAndReplacement(86_400);
    expect(
      (
        await call(`/v2/keys/${leaked.record.id}/revoke`, replacement.key, {
          method: "POST",
          ...json({ reason: "leaked" }),
        })
      ).status,
    ).toBe(200);
    const stale = await staleFor(leaked);
    forgetIsolateMemory();
    const attempts = [
      await apiWith(stale, `/v2/keys/${replacement.id}/revoke`, { method: "POST", key: leaked.key }),
      await apiWith(stale, "/v2/webhook-endpoints", {
        method: "POST",
        key: leaked.key,
        ...json({ url: "https://attacker.example/new" }),
      }),
    ];
    for (const attempt of attempts)
      expect(await errorBodyOf(attempt)).toMatchObject({ status: 401, code: "invalid_api_key" });
  });
});
