import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { sha256Hex } from "../../../src/lib/digest";
import { staleKeyKv } from "../../support/faults";
import { api, apiWith, errorBodyOf } from "../../support/request";
import { storeTestKey } from "../../support/test-keys";

/**
 * Keys issued, shown, changed, rotated and audited, and the named operators, through the operator API: what `npm run
 * keys` does, in the Worker (docs/operations.md#api-keys).
 */
const TOKEN = "operator-token-for-tests";
function admin(path: string, method = "GET", body?: unknown, token = TOKEN, bindings: Env = env) {
  return apiWith(bindings, `/admin${path}`, {
    method,
    key: null,
    headers: { Authorization: `Bearer ${token}`, ...(body !== undefined && { "Content-Type": "application/json" }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });
}
const listWith = (key: string) => api("/v1/store/orders", { key });
type Made = { key: string; id: string; plan: string; scopes: string[]; limits: { perMinute: number; perDay: number } };

describe("keys through the operator API", () => {
  it("issues a key that works at once, shown once, with its plan's limits and default scopes, audited", async () => {
    const made = await admin("/keys", "POST", { plan: "pro", name: "Acme" });
    expect(made.status).toBe(201);
    expect(made.headers.get("Cache-Control")).toBe("no-store");
    const key = (await made.json()) as Made;
    expect(key).toMatchObject({
      id: expect.stringMatching(/^key_[0-9A-Za-z]{16}$/),
      key: expect.stringMatching(/^so_test_[0-9A-Za-z]{38}$/),
      plan: "pro",
      name: "Acme",
      scopes: ["orders:read", "orders:write"],
      limits: { perMinute: 300, perDay: 10_000 },
      ownLimits: false,
      state: "live",
    });
    expect((await listWith(key.key)).status).toBe(200);

    const shown = await (await admin(`/keys/${key.id}`)).json();
    expect(shown).toMatchObject({ id: key.id, plan: "pro", budget: key.id, state: "live" });
    expect(JSON.stringify(shown)).not.toContain(key.key);
    expect(JSON.stringify(shown)).not.toContain(await sha256Hex(key.key));

    const { events } = (await (await admin(`/keys/${key.id}/history`)).json()) as {
      events: { operation: string; actor: string; changes: Record<string, unknown> }[];
    };
    expect(events).toEqual([
      expect.objectContaining({
        operation: "create",
        actor: "tests",
        changes: expect.objectContaining({ plan: "pro" }),
      }),
    ]);
  });

  it("finds a key by its id though its search entry is not written yet (KV refused it), and revokes it", async () => {
    const made = (await (await admin("/keys", "POST", { plan: "free", name: "unlisted" })).json()) as Made;
    // The operators' search entry, which the account writes after each change and owes when KV refuses it.
    await env.API_KEYS.delete(`id:${made.id}`);
    expect(await (await admin(`/keys/${made.id}`)).json()).toMatchObject({ id: made.id, state: "live" });
    expect((await admin(`/keys/${made.id}/revoke`, "POST")).status).toBe(200);
    expect((await listWith(made.key)).status).toBe(401);
  });

  it("refuses what it cannot issue in the Error shape: limits half given, enterprise without them, a past expiry", async () => {
    for (const [body, code] of [
      [{ plan: "free", perMinute: 5 }, "invalid_limits"],
      [{ plan: "enterprise" }, "invalid_limits"],
      [{ plan: "free", expiresAt: "2020-01-01T00:00:00Z" }, "invalid_body"],
      [{ plan: "gold" }, "invalid_body"],
      [{ plan: "free", scopes: ["orders:delete"] }, "invalid_body"],
      [{ plan: "free", secret: true }, "invalid_body"],
    ] as const) {
      expect(await errorBodyOf(await admin("/keys", "POST", body)), JSON.stringify(body)).toMatchObject({ code });
    }
  });

  it("changes an account's plan on every key of a rotated pair, and a name on the key named, audited once with both", async () => {
    const first = (await (await admin("/keys", "POST", { plan: "free" })).json()) as Made;
    const rotated = await admin(`/keys/${first.id}/rotate`, "POST", { graceSeconds: 3600 });
    expect(rotated.status).toBe(201);
    const second = (await rotated.json()) as { key: string; id: string; previous: { id: string; expiresAt: string } };
    expect(second.previous.id).toBe(first.id);
    expect((await listWith(second.key)).status).toBe(200);

    const updated = await admin(`/keys/${second.id}`, "PATCH", { plan: "business", name: "upgraded" });
    expect(updated.status).toBe(200);
    const answer = (await updated.json()) as { plan: string; name: string; reached: string[] };
    expect(answer).toMatchObject({ plan: "business", name: "upgraded" });
    // The plan is the account's: it reaches the old key in its grace as well, in the same write.
    expect(answer.reached).toEqual([second.id, first.id]);
    expect((await listWith(first.key)).headers.get("X-RateLimit-Limit")).toBe("1000");
    expect((await listWith(second.key)).headers.get("X-RateLimit-Limit")).toBe("1000");
    const history = (await (await admin(`/keys/${second.id}/history`)).json()) as { events: { operation: string }[] };
    expect(history.events.map(({ operation }) => operation)).toEqual(["create", "update"]);
  });

  it("refuses to change or rotate a key its account holds revoked, whatever KV shows", async () => {
    const key = await storeTestKey({ plan: "free" });
    const stale = { ...env, API_KEYS: await staleKeyKv(key) } as Env;
    expect((await admin(`/keys/${key.record.id}/revoke`, "POST", {})).status).toBe(200);
    for (const [path, method, body] of [
      [`/keys/${key.record.id}`, "PATCH", { name: "back from the dead" }],
      [`/keys/${key.record.id}/rotate`, "POST", {}],
    ] as const) {
      const refused = await admin(path, method, body, TOKEN, stale);
      expect(await errorBodyOf(refused), `${method} ${path}`).toMatchObject({ code: "key_not_found", status: 404 });
    }
    expect((await listWith(key.key)).status).toBe(401);
  });

  it("keeps a rotated key's grace: no new expiry for it, and no second rotation of it", async () => {
    const first = (await (await admin("/keys", "POST", { plan: "free" })).json()) as Made;
    const rotated = await admin(`/keys/${first.id}/rotate`, "POST", { graceSeconds: 3600 });
    expect(rotated.headers.get("Cache-Control")).toBe("no-store");
    const { previous } = (await rotated.json()) as { previous: { expiresAt: string } };
    const later = new Date(Date.now() + 365 * 86_400_000).toISOString();
    expect(await errorBodyOf(await admin(`/keys/${first.id}`, "PATCH", { expiresAt: later }))).toMatchObject({
      code: "invalid_body",
    });
    expect(await errorBodyOf(await admin(`/keys/${first.id}/rotate`, "POST", {}))).toMatchObject({
      code: "key_not_found",
    });
    expect(await (await admin(`/keys/${first.id}`)).json()).toMatchObject({ expiresAt: previous.expiresAt });
  });

  it("needs something to change, and keeps an enterprise plan's limits whole", async () => {
    const key = (await (await admin("/keys", "POST", { plan: "free" })).json()) as Made;
    expect(await errorBodyOf(await admin(`/keys/${key.id}`, "PATCH", {}))).toMatchObject({ code: "invalid_body" });
    expect(await errorBodyOf(await admin(`/keys/${key.id}`, "PATCH", { plan: "enterprise" }))).toMatchObject({
      code: "invalid_limits",
    });
    const own = await admin(`/keys/${key.id}`, "PATCH", { plan: "enterprise", perMinute: 7, perDay: 70 });
    expect(await own.json()).toMatchObject({
      plan: "enterprise",
      limits: { perMinute: 7, perDay: 70 },
      ownLimits: true,
    });
    expect((await listWith(key.key)).headers.get("X-RateLimit-Limit")).toBe("7");
    // Back to a plan: the key's own limits go with the plan change.
    const back = await admin(`/keys/${key.id}`, "PATCH", { plan: "pro" });
    expect(await back.json()).toMatchObject({
      plan: "pro",
      limits: { perMinute: 300, perDay: 10_000 },
      ownLimits: false,
    });
  });

  it("pages a key's history oldest first, by after=", async () => {
    const key = (await (await admin("/keys", "POST", { plan: "free" })).json()) as Made;
    for (let i = 0; i < 3; i++) await admin(`/keys/${key.id}`, "PATCH", { name: `name ${i}` });
    const { events, next } = (await (await admin(`/keys/${key.id}/history`)).json()) as {
      events: { changes: { name?: string } }[];
      next: string | null;
    };
    expect(events.map(({ changes }) => changes.name)).toEqual([expect.any(String), "name 0", "name 1", "name 2"]);
    expect(next).toBeNull();
    expect(await errorBodyOf(await admin(`/keys/${key.id}/history?after=-1`))).toMatchObject({ code: "invalid_query" });
  });
});

describe("named operators through the operator API", () => {
  it("adds one whose token works once shown, lists it, refuses its name again, revokes it, and links only the live", async () => {
    const added = await admin("/operators", "POST", { name: "ana@example.com" });
    expect(added.status).toBe(201);
    expect(added.headers.get("Cache-Control")).toBe("no-store");
    const { token } = (await added.json()) as { token: string };
    expect(token).toMatch(/^so_op_[A-Za-z0-9_-]{43}$/);
    expect((await admin("/operators", "GET", undefined, token)).status).toBe(200);

    const { data } = (await (await admin("/operators")).json()) as { data: { name: string; createdBy: string }[] };
    expect(data).toContainEqual(expect.objectContaining({ name: "ana@example.com", createdBy: "tests" }));
    expect(JSON.stringify(data)).not.toContain(token);
    expect(await errorBodyOf(await admin("/operators", "POST", { name: "ana@example.com" }))).toMatchObject({
      code: "operator_exists",
      status: 409,
    });

    // An operator makes their own link, never another's: the bootstrap token's holder makes anyone's.
    expect((await admin("/operators", "POST", { name: "bo@example.com" })).status).toBe(201);
    expect(await errorBodyOf(await admin("/operators/bo@example.com/link", "POST", undefined, token))).toMatchObject({
      code: "not_found",
    });
    expect((await admin("/operators/ana@example.com/link", "POST", undefined, token)).status).toBe(201);
    const link = await admin("/operators/ana@example.com/link", "POST");
    expect(link.status).toBe(201);
    expect(((await link.json()) as { url: string }).url).toMatch(/\/operator#link=[A-Za-z0-9_-]{43}$/);

    const revoked = await admin("/operators/ana@example.com/revoke", "POST");
    expect(await revoked.json()).toMatchObject({ name: "ana@example.com", revokedBy: "tests" });
    expect(await errorBodyOf(await admin("/operators", "GET", undefined, token))).toMatchObject({
      code: "invalid_api_key",
    });
    expect(await errorBodyOf(await admin("/operators/ana@example.com/link", "POST"))).toMatchObject({
      code: "not_found",
    });
    expect(await errorBodyOf(await admin("/operators", "POST", { name: "ana@example.com" }))).toMatchObject({
      code: "operator_exists",
    });
    expect(await errorBodyOf(await admin("/operators/nobody/revoke", "POST"))).toMatchObject({ code: "not_found" });
  });

  it.each(["tests", "github-secret-scanning", "operator"])(
    "never gives a name audits give another already: %s",
    async (name) => {
      expect(await errorBodyOf(await admin("/operators", "POST", { name }))).toMatchObject({
        code: "operator_exists",
        status: 409,
      });
    },
  );

  it("gives a name once when two ask for it at the same moment: one 201, one 409", async () => {
    const both = await Promise.all([1, 2].map(() => admin("/operators", "POST", { name: "twice@example.com" })));
    expect(both.map((response) => response.status).sort()).toEqual([201, 409]);
  });
});
