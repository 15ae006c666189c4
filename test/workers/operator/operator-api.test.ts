import { env } from "cloudflare:workers";
import { runDurableObjectAlarm } from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { INSERT_KEY_EVENT, keyEventValues } from "../../../src/keys/audit";
import { findKeyById } from "../../../src/keys/lookup";
import { forgetIsolateMemory } from "../../../src/app/isolate-memory";
import { accountsChangedAfterRead, interceptD1, staleKeyKv } from "../../support/faults";
import { storeTestKey, type TestKey } from "../../support/test-keys";
import { ANONYMOUS_LIMITS, OPERATOR_LIMITS } from "../../../src/account/plans";
import { api, apiWith, errorBodyOf } from "../../support/request";

const TOKEN = "operator-token-for-tests";
const asOperator = (path: string, method = "GET", token: string | null = TOKEN) =>
  api(path, { method, key: null, headers: token === null ? {} : { Authorization: `Bearer ${token}` } });

let key: TestKey;
beforeEach(async () => {
  key = await storeTestKey({ plan: "free", limits: { perMinute: 1, perDay: 100 } });
});
afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("the operator API", () => {
  it("needs the operator token: none is 401 missing, a wrong one 401 invalid, the right one passes", async () => {
    const path = `/admin/keys/${key.record.id}/usage`;
    expect(await errorBodyOf(await asOperator(path, "GET", null))).toMatchObject({
      code: "missing_api_key",
      status: 401,
    });
    expect(await errorBodyOf(await asOperator(path, "GET", "not-the-token"))).toMatchObject({
      code: "invalid_api_key",
      status: 401,
    });
    // An API key is not an operator token.
    expect((await asOperator(path, "GET", key.key)).status).toBe(401);
    expect((await asOperator(path)).status).toBe(200);
  });

  it("does not exist without an OPERATOR_TOKEN secret: every path 404, whatever the method, preflights included", async () => {
    const { OPERATOR_TOKEN: _, ...withoutToken } = env;
    const without = (path: string, method: string, headers: Record<string, string> = {}) =>
      apiWith(withoutToken as Env, path, {
        method,
        key: null,
        headers: { Authorization: `Bearer ${TOKEN}`, ...headers },
      });
    const preflight = { Origin: "https://ops.example", "Access-Control-Request-Method": "POST" };
    for (const [path, method, headers] of [
      [`/admin/keys/${key.record.id}/usage`, "GET"],
      [`/admin/keys/${key.record.id}/unban`, "GET"],
      [`/admin/keys/${key.record.id}/revoke`, "DELETE"],
      [`/admin/keys/${key.record.id}/revoke`, "OPTIONS", preflight],
      ["/admin/anything", "OPTIONS", preflight],
      ["/admin", "GET"],
    ] as [string, string, Record<string, string>?][]) {
      const response = await without(path, method, headers);
      expect(await errorBodyOf(response), `${method} ${path}`).toMatchObject({ code: "not_found", status: 404 });
      expect(response.headers.get("Allow"), `${method} ${path}`).toBeNull();
    }
    // With the token, the same preflight is answered as usual.
    expect(
      (await api(`/admin/keys/${key.record.id}/revoke`, { method: "OPTIONS", key: null, headers: preflight })).status,
    ).toBe(204);
  });

  it("counts the operator on their own account, never the address's: 61 requests in a minute meet no 429", async () => {
    const response = await asOperator("/admin/keys/key_0123456789abcdef/usage");
    expect(await errorBodyOf(response)).toMatchObject({ code: "not_found" });
    expect(response.headers.get("X-RateLimit-Limit")).toBe(String(OPERATOR_LIMITS.perMinute));
    const address = { "CF-Connecting-IP": "198.51.100.61" };
    const statuses: number[] = [];
    for (let i = 0; i < ANONYMOUS_LIMITS.perMinute + 1; i++) {
      statuses.push(
        (
          await api(`/admin/keys/${key.record.id}/usage`, {
            key: null,
            headers: { Authorization: `Bearer ${TOKEN}`, ...address },
          })
        ).status,
      );
    }
    expect(statuses.filter((status) => status !== 200)).toEqual([]);
    // The address's own keyless callers are counted apart, as before.
    expect((await api("/v1/store/orders", { key: null, headers: address })).headers.get("X-RateLimit-Limit")).toBe(
      String(ANONYMOUS_LIMITS.perMinute),
    );
    // A token that is not an operator's is counted by the address.
    expect(
      (
        await api(`/admin/keys/${key.record.id}/usage`, {
          key: null,
          headers: { Authorization: "Bearer not-a-token", ...address },
        })
      ).headers.get("X-RateLimit-Limit"),
    ).toBe(String(ANONYMOUS_LIMITS.perMinute));
  });

  it("unbans an address group, audited under the operator's name; a group spelled otherwise is 400", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.UTC(2030, 2, 10, 12, 0, 5));
    const address = { "CF-Connecting-IP": "2001:db8:77:1::9" };
    let code: string | undefined;
    for (let i = 0; i < ANONYMOUS_LIMITS.perMinute + 30 && code !== "api_key_banned"; i++) {
      code = (await (await api("/v1/store/orders", { key: null, headers: address })).json<{ code?: string }>()).code;
    }
    expect(code).toBe("api_key_banned");
    const unban = await api("/admin/address-groups/unban", {
      method: "POST",
      key: null,
      headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ group: "2001:db8:77:1::/64" }),
    });
    expect(unban.status).toBe(200);
    expect(await unban.json()).toMatchObject({ group: "2001:db8:77:1::/64", usage: { bannedUntil: 0 } });
    // Not banned any more once this isolate asks the object again (within a lease): its minute is still spent, so it is
    // limited, no more.
    vi.setSystemTime(Date.UTC(2030, 2, 10, 12, 0, 11));
    expect((await errorBodyOf(await api("/v1/store/orders", { key: null, headers: address }))).code).toBe(
      "rate_limit_exceeded",
    );
    const row = await env.DB.prepare("SELECT actor, changes FROM key_events WHERE key_id = ?1 AND operation = 'unban'")
      .bind("ip:2001:db8:77:1::/64")
      .first();
    expect(row).toEqual({ actor: "tests", changes: JSON.stringify({ group: "2001:db8:77:1::/64" }) });
    for (const group of ["2001:db8:77:1::9", "2001:0db8:77:1::/64", "not an address", "10.0.0.1/24"]) {
      const refused = await api("/admin/address-groups/unban", {
        method: "POST",
        key: null,
        headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
        body: JSON.stringify({ group }),
      });
      expect(await errorBodyOf(refused), group).toMatchObject({ code: "invalid_body", status: 400 });
    }
  });

  it("sets limits on the account alone: its revoked key stays revoked, whatever a stale read of KV says", async () => {
    const owner = await storeTestKey({ plan: "pro" });
    const revoked = await storeTestKey({ plan: "pro", budget: owner.record.id });
    expect((await asOperator(`/admin/keys/${revoked.record.id}/revoke`, "POST")).status).toBe(200);
    // KV at this location still answers the record from before the revocation.
    const stale = await staleKeyKv(revoked);
    const set = await apiWith({ ...env, API_KEYS: stale }, `/admin/keys/${owner.record.id}/limits`, {
      method: "POST",
      key: null,
      headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ perMinute: 7, perDay: 70 }),
    });
    expect(set.status).toBe(200);
    expect((await findKeyById(env, revoked.record.id))!.revokedAt).toBeDefined();
    expect((await findKeyById(env, owner.record.id))!.limits).toEqual({ perMinute: 7, perDay: 70 });
  });

  it("pages an account's timeline, its own rows only: 200 a page, newest first, the next by before=", async () => {
    const mine = await storeTestKey({ plan: "pro" });
    const base = Date.UTC(2030, 0, 1);
    const row = (budget: string, i: number) =>
      env.DB.prepare(
        "INSERT INTO webhook_endpoint_events (event_id, at, operation, endpoint_id, changes, actor, budget) VALUES " +
          "(?1, ?2, 'test', 'we_00000000000000000001', '{}', 'key:x', ?3)",
      ).bind(`${budget}-${i}`, new Date(base + i * 1_000).toISOString(), budget);
    // Three more rows at the instant where the first page ends (a host lock writes many at once): none may be skipped.
    const tied = (i: number) =>
      env.DB.prepare(
        "INSERT INTO webhook_endpoint_events (event_id, at, operation, endpoint_id, changes, actor, budget) VALUES " +
          "(?1, ?2, 'disable', 'we_00000000000000000002', '{}', 'ops', ?3)",
      ).bind(`tied-${i}`, new Date(base + 30_000).toISOString(), mine.record.id);
    await env.DB.batch([
      ...Array.from({ length: 230 }, (_, i) => row(mine.record.id, i)),
      ...Array.from({ length: 30 }, (_, i) => row("key_someoneelse00000", i)),
      ...[0, 1, 2].map(tied),
    ]);
    const page = async (query = "") =>
      (await (await asOperator(`/admin/keys/${mine.record.id}/budget${query}`)).json()) as {
        timeline: { at: string; subject: string; operation: string }[];
        timelineNext: string | null;
      };
    const first = await page();
    expect(first.timeline[0]!.at).toBe(new Date(base + 229_000).toISOString());
    // The page ends before the tied instant: its four rows go to the next page together.
    expect(first.timeline).toHaveLength(199);
    expect(first.timelineNext).toBe(new Date(base + 30_000).toISOString());
    const second = await page(`?before=${encodeURIComponent(first.timelineNext!)}`);
    expect(second.timeline).toHaveLength(34);
    expect(second.timelineNext).toBeNull();
    const all = [...first.timeline, ...second.timeline];
    expect(all).toHaveLength(233);
    expect(all.filter((entry) => entry.operation === "disable")).toHaveLength(3);
    expect(await errorBodyOf(await asOperator(`/admin/keys/${mine.record.id}/budget?before=yesterday`))).toMatchObject({
      code: "invalid_query",
    });
  });

  it("answers a method an operator path lacks with 405 and Allow, like every other path", async () => {
    const response = await asOperator(`/admin/keys/${key.record.id}/unban`, "GET");
    expect(await errorBodyOf(response)).toMatchObject({ code: "method_not_allowed", status: 405 });
    expect(response.headers.get("Allow")).toBe("POST, OPTIONS");
  });

  it("reports live usage from the key's object", async () => {
    await api("/v1/store/orders", { key: key.key });
    await api("/v1/store/orders", { key: key.key });
    const body = (await (await asOperator(`/admin/keys/${key.record.id}/usage`)).json()) as {
      usage: { minute: { count: number }; day: { count: number }; refusedInARow: number };
    };
    // The refusal reaches the object with the isolate's next batch, once its client has the 429
    // (docs/design/rate-limits.md#leases).
    expect(body.usage).toMatchObject({ minute: { count: 1 }, day: { count: 1 }, refusedInARow: 0 });
  });

  it("unbans: the next request is admitted, and the unban is in the audit with the operator's name", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.UTC(2030, 2, 10, 12, 0, 10));
    for (let i = 0; i < 22; i++) await api("/v1/store/orders", { key: key.key });
    expect((await errorBodyOf(await api("/v1/store/orders", { key: key.key }))).code).toBe("api_key_banned");

    const unbanned = await asOperator(`/admin/keys/${key.record.id}/unban`, "POST");
    expect(unbanned.status).toBe(200);
    // The isolate asks the object again within a lease's length; the next minute has room again.
    vi.setSystemTime(Date.UTC(2030, 2, 10, 12, 1, 0));
    expect((await api("/v1/store/orders", { key: key.key })).status).toBe(200);
    const event = await env.DB.prepare("SELECT operation, actor FROM key_events WHERE key_id = ?1")
      .bind(key.record.id)
      .first();
    expect(event).toEqual({ operation: "unban", actor: "tests" });
  });

  it("refuses a key revoked through this isolate at its very next request, the lease it holds notwithstanding", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const busy = await storeTestKey({ plan: "pro" });
    const start = Date.UTC(2030, 2, 10, 12, 0, 1);
    // A steady caller: this isolate is granted admissions ahead, and holds the account's word on the key.
    for (let i = 0; i < 20; i++) {
      vi.setSystemTime(start + i * 100);
      expect((await api("/v1/store/orders", { key: busy.key })).status).toBe(200);
    }
    expect((await asOperator(`/admin/keys/${busy.record.id}/revoke`, "POST")).status).toBe(200);
    vi.setSystemTime(start + 2_010);
    expect(await errorBodyOf(await api("/v1/store/orders", { key: busy.key }))).toMatchObject({
      code: "invalid_api_key",
    });
  });

  it("revokes through the key's account: refused within a lease's length", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const roomy = await storeTestKey({ plan: "pro" });
    vi.setSystemTime(Date.UTC(2030, 2, 10, 12, 0, 1));
    expect((await api("/v1/store/orders", { key: roomy.key })).status).toBe(200);
    expect((await asOperator(`/admin/keys/${roomy.record.id}/revoke`, "POST")).status).toBe(200);

    vi.setSystemTime(Date.UTC(2030, 2, 10, 12, 0, 7));
    const refused = await api("/v1/store/orders", { key: roomy.key });
    expect(await errorBodyOf(refused)).toMatchObject({ code: "invalid_api_key", status: 401 });
    // Counted as what it now is, a caller without a valid key: by its address, at the free plan's limits.
    expect(refused.headers.get("X-RateLimit-Limit")).toBe("60");
    expect((await api("/v1/store/orders", { key: roomy.key })).status).toBe(401);
  });

  it("lets a revoked key spend nothing of its account and count nothing toward its ban", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.UTC(2030, 2, 10, 12, 0, 1));
    expect((await api("/v1/store/orders", { key: key.key })).status).toBe(200);
    expect((await asOperator(`/admin/keys/${key.record.id}/revoke`, "POST")).status).toBe(200);
    for (let i = 0; i < 25; i++) expect((await api("/v1/store/orders", { key: key.key })).status).toBe(401);
    const { usage } = (await (await asOperator(`/admin/keys/${key.record.id}/usage`)).json()) as {
      usage: { minute: { count: number }; refusedInARow: number; bannedUntil: number };
    };
    expect(usage).toMatchObject({ minute: { count: 1 }, refusedInARow: 0, bannedUntil: 0 });
  });

  it("revokes for good: the account keeps the revocation after its windows are gone", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const roomy = await storeTestKey({ plan: "pro" });
    vi.setSystemTime(Date.UTC(2030, 2, 10, 12, 0, 0));
    expect((await api("/v1/store/orders", { key: roomy.key })).status).toBe(200);
    expect((await asOperator(`/admin/keys/${roomy.record.id}/revoke`, "POST")).status).toBe(200);
    const stored = (await findKeyById(env, roomy.record.id))!;
    expect(stored.revokedAt).toBe(new Date(Date.UTC(2030, 2, 10, 12, 0, 0)).toISOString());
    // The next day: the windows are gone, the account's keys are not.
    vi.setSystemTime(Date.UTC(2030, 2, 11, 12, 0, 0));
    await runDurableObjectAlarm(env.ACCOUNTS.getByName(roomy.record.id));
    expect(await errorBodyOf(await api("/v1/store/orders", { key: roomy.key }))).toMatchObject({
      code: "invalid_api_key",
    });
    const { results } = await env.DB.prepare("SELECT operation, changes, outcome FROM key_events WHERE key_id = ?1")
      .bind(roomy.record.id)
      .all();
    expect(results).toEqual([
      {
        operation: "revoke",
        changes: JSON.stringify({ revokedAt: stored.revokedAt, reason: "retired", budget: roomy.record.id }),
        outcome: null,
      },
    ]);
  });

  it("keeps the audit row of an action whose outcome is unknown, marked so, instead of deleting it", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const lostAnswers = {
      ...env,
      // The object is reached for limits as usual; the unban's answer is lost on the way back.
      ACCOUNTS: {
        getByName: (name: string) => {
          const real = env.ACCOUNTS.getByName(name);
          return {
            acquire: (request: never) => real.acquire(request),
            settle: (request: never) => real.settle(request),
            key: (keyId: string) => real.key(keyId),
            unban: () => Promise.reject(new Error("Network connection lost.")),
          };
        },
      },
    } as unknown as Env;
    const response = await apiWith(lostAnswers, `/admin/keys/${key.record.id}/unban`, {
      method: "POST",
      key: null,
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(await errorBodyOf(response)).toMatchObject({ code: "service_unavailable", status: 503 });
    const { results } = await env.DB.prepare("SELECT operation, actor, outcome FROM key_events WHERE key_id = ?1")
      .bind(key.record.id)
      .all();
    expect(results).toEqual([{ operation: "unban", actor: "tests", outcome: "unknown" }]);
  });

  it("writes one row for an audit insert sent twice (its first answer lost)", async () => {
    const values = keyEventValues({
      id: "evt-once",
      at: "2030-03-10T12:00:00.000Z",
      operation: "unban",
      keyId: key.record.id,
      changes: {},
      actor: "tests",
    });
    const first = await env.DB.prepare(INSERT_KEY_EVENT)
      .bind(...values)
      .first<number>("id");
    const again = await env.DB.prepare(INSERT_KEY_EVENT)
      .bind(...values)
      .first<number>("id");
    expect(again).toBe(first);
    expect(
      await env.DB.prepare("SELECT COUNT(*) AS n FROM key_events WHERE key_id = ?1").bind(key.record.id).first("n"),
    ).toBe(1);
  });

  it("keeps a revocation made just before midnight when the day's state is cleared", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const roomy = await storeTestKey({ plan: "pro" });
    vi.setSystemTime(Date.UTC(2030, 2, 10, 23, 59, 40));
    expect((await api("/v1/store/orders", { key: roomy.key })).status).toBe(200);
    expect((await asOperator(`/admin/keys/${roomy.record.id}/revoke`, "POST")).status).toBe(200);
    vi.setSystemTime(Date.UTC(2030, 2, 11, 0, 0, 5));
    await runDurableObjectAlarm(env.ACCOUNTS.getByName(roomy.record.id));
    expect(await errorBodyOf(await api("/v1/store/orders", { key: roomy.key }))).toMatchObject({
      code: "invalid_api_key",
    });
  });

  it("writes every action to the audit with the operator's name: limits, revocation, unban", async () => {
    const post = (action: string, body?: unknown) =>
      api(`/admin/keys/${key.record.id}/${action}`, {
        method: "POST",
        key: null,
        headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    expect((await post("limits", { perMinute: 5, perDay: 50 })).status).toBe(200);
    expect((await post("unban")).status).toBe(200);
    expect((await post("revoke")).status).toBe(200);
    const { results } = await env.DB.prepare(
      "SELECT operation, changes, actor FROM key_events WHERE key_id = ?1 ORDER BY id",
    )
      .bind(key.record.id)
      .all();
    expect(results.map((row) => ({ ...row, changes: JSON.parse(String(row.changes)) }))).toEqual([
      {
        operation: "update",
        actor: "tests",
        changes: { limits: { perMinute: 5, perDay: 50 }, budget: key.record.id },
      },
      { operation: "unban", actor: "tests", changes: { budget: key.record.id } },
      // The revoke names when: the instant the account holds.
      {
        operation: "revoke",
        actor: "tests",
        changes: { revokedAt: expect.any(String), reason: "retired", budget: key.record.id },
      },
    ]);
  });

  it("does not act when its audit row cannot be written: a banned key stays banned", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.spyOn(console, "error").mockImplementation(() => {});
    vi.setSystemTime(Date.UTC(2030, 2, 10, 12, 0, 10));
    for (let i = 0; i < 22; i++) await api("/v1/store/orders", { key: key.key });
    const noAudit = interceptD1({
      prepare: (statement, sql) =>
        sql.startsWith("INSERT INTO key_events")
          ? ({
              bind: () => ({ first: () => Promise.reject(new Error("D1_ERROR: overloaded")) }),
            } as unknown as D1PreparedStatement)
          : statement,
    });
    const response = await apiWith({ ...env, DB: noAudit }, `/admin/keys/${key.record.id}/unban`, {
      method: "POST",
      key: null,
      headers: { Authorization: `Bearer ${TOKEN}` },
    });
    expect(await errorBodyOf(response)).toMatchObject({ code: "service_unavailable", status: 503 });
    const { usage } = (await (await asOperator(`/admin/keys/${key.record.id}/usage`)).json()) as {
      usage: { bannedUntil: number };
    };
    expect(usage.bannedUntil).toBeGreaterThan(Date.UTC(2030, 2, 10, 12, 0, 10) / 1000);
    expect(
      await env.DB.prepare("SELECT COUNT(*) AS n FROM key_events WHERE key_id = ?1").bind(key.record.id).first("n"),
    ).toBe(0);
  });

  it("keeps limits an operator sets across a UTC midnight, after the windows are gone: they are the account's", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.UTC(2030, 2, 10, 23, 50, 0));
    const pro = await storeTestKey({ plan: "pro" });
    const rotated = await storeTestKey({ plan: "pro", budget: pro.record.id });
    const set = await api(`/admin/keys/${pro.record.id}/limits`, {
      method: "POST",
      key: null,
      headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ perMinute: 2, perDay: 5 }),
    });
    expect(set.status).toBe(200);
    for (const key of [pro, rotated])
      expect((await findKeyById(env, key.record.id))!.limits).toEqual({ perMinute: 2, perDay: 5 });
    // The next day: the windows are gone, and the account holds the limits.
    vi.setSystemTime(Date.UTC(2030, 2, 11, 12, 0, 0));
    await runDurableObjectAlarm(env.ACCOUNTS.getByName(pro.record.id));
    const first = await api("/v1/store/orders", { key: pro.key });
    expect(first.headers.get("X-RateLimit-Limit")).toBe("2");
    expect((await api("/v1/store/orders", { key: rotated.key })).status).toBe(200);
    expect((await api("/v1/store/orders", { key: pro.key })).status).toBe(429);
    // The operators' account page shows the limits in force.
    const page = (await (await asOperator(`/admin/keys/${pro.record.id}/budget`)).json()) as {
      keys: { limits: unknown }[];
    };
    expect(page.keys.every((key) => JSON.stringify(key.limits) === JSON.stringify({ perMinute: 2, perDay: 5 }))).toBe(
      true,
    );
  });

  it("sets limits on the plan the account holds then, not the one it was read with (a move landing between)", async () => {
    const pro = await storeTestKey({ plan: "pro" });
    // Another operator's move to business lands after this call read the key and before it sets the limits.
    const racing = accountsChangedAfterRead((account) => account.setPlan({ plan: "business" }));
    const set = await apiWith({ ...env, ACCOUNTS: racing }, `/admin/keys/${pro.record.id}/limits`, {
      method: "POST",
      key: null,
      headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ perMinute: 2, perDay: 5 }),
    });
    expect(set.status).toBe(200);
    expect(await findKeyById(env, pro.record.id)).toMatchObject({
      plan: "business",
      limits: { perMinute: 2, perDay: 5 },
    });
  });

  it("applies new limits through the key's account within a lease's length, whatever KV says", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    const pro = await storeTestKey({ plan: "pro" });
    vi.setSystemTime(Date.UTC(2030, 2, 10, 12, 0, 1));
    expect((await api("/v1/store/orders", { key: pro.key })).headers.get("X-RateLimit-Limit")).toBe("300");
    const response = await api(`/admin/keys/${pro.record.id}/limits`, {
      method: "POST",
      key: null,
      headers: { Authorization: `Bearer ${TOKEN}`, "Content-Type": "application/json" },
      body: JSON.stringify({ perMinute: 1000, perDay: 100000 }),
    });
    expect(response.status).toBe(200);
    vi.setSystemTime(Date.UTC(2030, 2, 10, 12, 0, 7));
    expect((await api("/v1/store/orders", { key: pro.key })).headers.get("X-RateLimit-Limit")).toBe("1000");
    // Another isolate, where KV still serves the record before the update: the key's object decides, not KV.
    forgetIsolateMemory();
    const stale = { ...env, API_KEYS: await staleKeyKv(pro) };
    expect((await apiWith(stale, "/v1/store/orders", { key: pro.key })).headers.get("X-RateLimit-Limit")).toBe("1000");

    const post = (body: string, headers: Record<string, string> = { "Content-Type": "application/json" }) =>
      api(`/admin/keys/${pro.record.id}/limits`, {
        method: "POST",
        key: null,
        headers: { Authorization: `Bearer ${TOKEN}`, ...headers },
        body,
      });
    expect(await errorBodyOf(await post("{}"))).toMatchObject({ code: "invalid_limits", status: 400 });
    const stamped = JSON.stringify({ perMinute: 5, perDay: 50, setAt: new Date().toISOString() });
    expect(await errorBodyOf(await post(stamped))).toMatchObject({ code: "invalid_limits", status: 400 });
    // The body is read as every JSON body is: its type, its size and its syntax, each in the Error shape.
    expect(await errorBodyOf(await post(JSON.stringify({ perMinute: 5, perDay: 50 }), {}))).toMatchObject({
      code: "unsupported_media_type",
      status: 415,
    });
    expect(
      await errorBodyOf(await post(`{"perMinute": 5, "perDay": 50, "pad": "${"x".repeat(20_000)}"}`)),
    ).toMatchObject({ code: "body_too_large", status: 413 });
    expect(await errorBodyOf(await post("{"))).toMatchObject({ code: "invalid_body", status: 400 });
  });
});
