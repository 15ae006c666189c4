import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { api, apiWith, errorBodyOf, ORIGIN } from "../../support/request";
import { storeTestKey, type TestKey } from "../../support/test-keys";
import { makeEndpoint, withoutDispatcher } from "../../support/webhook-fixtures";
import { sealSession, SESSION_COOKIE } from "../../../src/console-kit/session-cookie";

/** The console's sessions (docs/api.md#the-console): the cookie, and what it may and may not do. */
const OPERATOR = "Bearer operator-token-for-tests";
const ALL_SCOPES = ["orders:read", "orders:write", "webhooks:manage", "keys:manage"] as const;

async function signIn(key: TestKey, url = ""): Promise<{ response: Response; cookie: string }> {
  const response = await api(`${url}/v2/console/session`, {
    method: "POST",
    key: key.key,
    headers: { Origin: ORIGIN },
  });
  const cookie = /^__Host-so_console=([^;]+)/.exec(response.headers.get("Set-Cookie") ?? "")?.[1] ?? "";
  return { response, cookie };
}

/** A request the browser would send with the session cookie and no key. */
const withCookie = (cookie: string, path: string, init: RequestInit = {}) =>
  apiWith(withoutDispatcher(), path, {
    ...init,
    key: null,
    headers: {
      Cookie: `__Host-${SESSION_COOKIE}=${cookie}`,
      ...(init.method && init.method !== "GET" ? { Origin: ORIGIN } : {}),
      ...(init.headers as Record<string, string>),
    },
  });

const keyWith = () => storeTestKey({ scopes: [...ALL_SCOPES] });

afterEach(() => {
  vi.useRealTimers();
  vi.restoreAllMocks();
});

describe("signing in with a key", () => {
  it("sets a sealed HttpOnly, Secure, SameSite=Strict cookie for 12 hours that carries no key, and stands for the key", async () => {
    const key = await keyWith();
    const { response, cookie } = await signIn(key);
    expect(response.status).toBe(201);
    const setCookie = response.headers.get("Set-Cookie")!;
    // Over https the name has the __Host- prefix: no other host may set or shadow it.
    expect(setCookie).toMatch(/^__Host-so_console=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/);
    expect(setCookie).not.toContain(key.key);
    expect(setCookie).not.toContain(key.record.id);
    const session = await withCookie(cookie, "/v2/console/session");
    expect(session.status).toBe(200);
    const body = await session.json<{
      key: { id: string; start: string; scopes: string[] };
      session: { expiresAt: string } | null;
      remaining: { minute: { remaining: number } };
    }>();
    expect(body.key.id).toBe(key.record.id);
    expect(body.key.start).toBe(key.key.slice(0, 12));
    expect(body.key.scopes).toEqual(ALL_SCOPES);
    expect(Date.parse(body.session!.expiresAt) - Date.now()).toBeGreaterThan(11.9 * 3_600_000);
    expect(body.remaining.minute.remaining).toBeGreaterThan(0);
    // The limits and scopes of the key apply: its requests carry its rate-limit headers.
    expect(session.headers.get("X-RateLimit-Limit")).not.toBeNull();
  });

  it("drops Secure only for plain http to localhost (npm start)", async () => {
    const key = await keyWith();
    const request = new Request("http://localhost:8787/v2/console/session", {
      method: "POST",
      headers: { Authorization: `Bearer ${key.key}`, Origin: "http://localhost:8787" },
    });
    const { default: worker } = await import("../../../src/app/worker");
    const { createExecutionContext } = await import("cloudflare:test");
    const response = await worker.fetch(request, env, createExecutionContext());
    expect(response.status).toBe(201);
    expect(response.headers.get("Set-Cookie")).toMatch(
      /^so_console=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200$/,
    );
  });

  it("is refused from another site, and without a key; a bad key is 401 as anywhere", async () => {
    const key = await keyWith();
    const crossSite = await api("/v2/console/session", {
      method: "POST",
      key: key.key,
      headers: { Origin: "https://evil.example" },
    });
    expect((await errorBodyOf(crossSite)).code).toBe("cross_site_request");
    expect(crossSite.headers.get("Set-Cookie")).toBeNull();
    expect((await errorBodyOf(await api("/v2/console/session", { method: "POST", key: null }))).code).toBe(
      "missing_api_key",
    );
    expect(
      (await errorBodyOf(await api("/v2/console/session", { method: "POST", key: `so_test_${"x".repeat(32)}` }))).code,
    ).toBe("invalid_api_key");
  });

  it("is audited, with the session's id and never the key", async () => {
    const key = await keyWith();
    await signIn(key);
    const rows = await env.DB.prepare("SELECT operation, actor, changes FROM key_events WHERE key_id = ?1")
      .bind(key.record.id)
      .all<{ operation: string; actor: string; changes: string }>();
    expect(rows.results.map((row) => [row.operation, row.actor])).toEqual([
      ["console_sign_in", `key:${key.record.id}`],
    ]);
    expect(JSON.parse(rows.results[0]!.changes)).toMatchObject({ via: "key" });
    expect(rows.results[0]!.changes).not.toContain(key.key);
  });
});

describe("a session", () => {
  it("ends at sign-out, everywhere: the same cookie is refused afterwards, and the cookie is cleared", async () => {
    const key = await keyWith();
    const { cookie } = await signIn(key);
    const out = await withCookie(cookie, "/v2/console/session", { method: "DELETE" });
    expect(out.status).toBe(204);
    expect(out.headers.get("Set-Cookie")).toMatch(
      /^__Host-so_console=; Path=\/; HttpOnly; SameSite=Strict; Max-Age=0; Secure$/,
    );
    const after = await withCookie(cookie, "/v2/console/session");
    expect(after.status).toBe(401);
    expect(await errorBodyOf(after)).toMatchObject({
      code: "session_ended",
      message: expect.stringContaining("signed out"),
    });
    // The browser is told to drop the cookie it still sends.
    expect(after.headers.get("Set-Cookie")).toMatch(/^__Host-so_console=; .*Max-Age=0/);
  });

  it("ends when its key is revoked, at once", async () => {
    const key = await keyWith();
    const { cookie } = await signIn(key);
    expect((await withCookie(cookie, "/v2/webhook-endpoints")).status).toBe(200);
    const revoked = await api(`/admin/keys/${key.record.id}/revoke`, {
      method: "POST",
      key: null,
      headers: { Authorization: OPERATOR },
    });
    expect(revoked.status).toBe(200);
    const after = await withCookie(cookie, "/v2/webhook-endpoints");
    expect(await errorBodyOf(after)).toMatchObject({
      code: "session_ended",
      message: expect.stringContaining("its key was revoked"),
    });
  });

  it("ends within 5 s of its key's expiry, as the key's own requests do (the rotation's grace ending included)", async () => {
    const key = await keyWith();
    const { cookie } = await signIn(key);
    // The key rotates itself with no grace: the old key expires now.
    const rotated = await withCookie(cookie, `/v2/keys/${key.record.id}/rotate`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ graceSeconds: 0 }),
    });
    expect(rotated.status).toBe(201);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 5_001);
    expect((await withCookie(cookie, "/v2/console/session")).status).toBe(401);
    expect((await api("/v2/console/session", { key: key.key })).status).toBe(401);
  });

  it("lasts 12 hours at most, and a cookie not sealed by this deployment is refused", async () => {
    const key = await keyWith();
    const { cookie } = await signIn(key);
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(Date.now() + 12 * 3_600_000 + 1);
    expect(await errorBodyOf(await withCookie(cookie, "/v2/console/session"))).toMatchObject({
      code: "session_ended",
      message: expect.stringContaining("12 hours"),
    });
    vi.useRealTimers();
    const forged = await sealSession("another deployment's key", {
      sid: crypto.randomUUID(),
      keyId: key.record.id,
      budget: key.record.id,
      expiresAt: Date.now() + 60_000,
    });
    expect((await withCookie(forged, "/v2/console/session")).status).toBe(401);
    const tampered = cookie.slice(0, -4) + (cookie.endsWith("AAA=") ? "BBB=" : "AAA=");
    expect((await withCookie(tampered, "/v2/console/session")).status).toBe(401);
  });

  it("cannot read or change another account's endpoints", async () => {
    const mine = await keyWith();
    const theirs = await keyWith();
    const endpoint = await makeEndpoint(theirs.key, { url: "https://receiver.example/hook" });
    const { cookie } = await signIn(mine);
    const list = await withCookie(cookie, "/v2/webhook-endpoints");
    expect((await list.json<{ data: unknown[] }>()).data).toEqual([]);
    for (const [method, path, body] of [
      ["GET", `/v2/webhook-endpoints/${endpoint.id}`, undefined],
      ["GET", `/v2/webhook-endpoints/${endpoint.id}/deliveries`, undefined],
      ["PATCH", `/v2/webhook-endpoints/${endpoint.id}`, { status: "disabled" }],
      ["POST", `/v2/webhook-endpoints/${endpoint.id}/rotate-secret`, {}],
      ["POST", `/v2/webhook-endpoints/${endpoint.id}/test`, undefined],
      ["DELETE", `/v2/webhook-endpoints/${endpoint.id}`, undefined],
    ] as const) {
      const response = await withCookie(cookie, path, {
        method,
        ...(body && { headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) }),
      });
      expect(response.status, `${method} ${path}`).toBe(404);
    }
    const still = await api(`/v2/webhook-endpoints/${endpoint.id}`, { key: theirs.key });
    expect((await still.json<{ status: string }>()).status).toBe("enabled");
  });

  it("refuses a write from another site, or with no Origin at all, and lets reads and same-origin writes through", async () => {
    const key = await keyWith();
    const { cookie } = await signIn(key);
    const create = (origin: string | undefined) =>
      apiWith(withoutDispatcher(), "/v2/webhook-endpoints", {
        method: "POST",
        key: null,
        headers: {
          Cookie: `__Host-${SESSION_COOKIE}=${cookie}`,
          "Content-Type": "application/json",
          ...(origin && { Origin: origin }),
        },
        body: JSON.stringify({ url: "https://receiver.example/hook" }),
      });
    expect((await errorBodyOf(await create("https://evil.example"))).code).toBe("cross_site_request");
    expect((await errorBodyOf(await create(undefined))).code).toBe("cross_site_request");
    expect(
      (await api("/v2/webhook-endpoints", { key: key.key }).then((r) => r.json<{ data: unknown[] }>())).data,
    ).toEqual([]);
    expect((await create(ORIGIN)).status).toBe(201);
  });

  it("has the key's scopes, no more: a key without webhooks:manage is refused through its session too", async () => {
    const key = await storeTestKey({ scopes: ["orders:read"] });
    const { cookie } = await signIn(key);
    expect((await errorBodyOf(await withCookie(cookie, "/v2/webhook-endpoints"))).code).toBe("insufficient_scope");
    expect((await errorBodyOf(await withCookie(cookie, "/v2/keys"))).code).toBe("insufficient_scope");
  });

  it("is replaced by a new sign-in from the same browser, which ends it; over https only the __Host- cookie counts", async () => {
    const key = await keyWith();
    const { cookie: first } = await signIn(key);
    const second = await api("/v2/console/session", {
      method: "POST",
      key: key.key,
      headers: { Origin: ORIGIN, Cookie: `__Host-so_console=${first}` },
    });
    expect(second.status).toBe(201);
    expect(await errorBodyOf(await withCookie(first, "/v2/console/session"))).toMatchObject({
      code: "session_ended",
      message: expect.stringContaining("replaced"),
    });
    const next = /^__Host-so_console=([^;]+)/.exec(second.headers.get("Set-Cookie")!)![1]!;
    expect((await withCookie(next, "/v2/console/session")).status).toBe(200);
    // Set by another host without the prefix: not this service's cookie.
    const shadow = await apiWith(withoutDispatcher(), "/v2/console/session", {
      key: null,
      headers: { Cookie: `so_console=${next}` },
    });
    expect((await errorBodyOf(shadow)).code).toBe("missing_api_key");
  });

  it("gives way to a key in the header: an API client never rides on a cookie", async () => {
    const mine = await keyWith();
    const other = await keyWith();
    const { cookie } = await signIn(mine);
    const response = await api("/v2/console/session", {
      key: other.key,
      headers: { Cookie: `__Host-${SESSION_COOKIE}=${cookie}` },
    });
    expect((await response.json<{ key: { id: string }; session: null }>()).key.id).toBe(other.record.id);
  });
});

describe("an operator's single-use link", () => {
  const makeLink = async (keyId: string) => {
    const response = await api(`/admin/keys/${keyId}/console-link`, {
      method: "POST",
      key: null,
      headers: { Authorization: OPERATOR },
    });
    expect(response.status).toBe(201);
    return response.json<{ url: string; expiresAt: string; keyId: string }>();
  };
  const redeem = (token: string, origin = ORIGIN) =>
    api("/v2/console/session/link", {
      method: "POST",
      key: null,
      headers: { "Content-Type": "application/json", Origin: origin },
      body: JSON.stringify({ token }),
    });

  it("signs in once, within 15 minutes, with the token in the fragment; audited, the token kept only as a digest", async () => {
    const key = await keyWith();
    const link = await makeLink(key.record.id);
    expect(link.url).toMatch(/^http:\/\/localhost:8787\/console#link=[A-Za-z0-9_-]{43}$/);
    expect(Date.parse(link.expiresAt) - Date.now()).toBeGreaterThan(14.9 * 60_000);
    const token = link.url.split("#link=")[1]!;
    const first = await redeem(token);
    expect(first.status).toBe(201);
    const cookie = /^__Host-so_console=([^;]+)/.exec(first.headers.get("Set-Cookie")!)![1]!;
    expect((await (await withCookie(cookie, "/v2/console/session")).json<{ key: { id: string } }>()).key.id).toBe(
      key.record.id,
    );
    const again = await redeem(token);
    expect((await errorBodyOf(again)).code).toBe("invalid_console_link");
    expect(again.headers.get("Set-Cookie")).toBeNull();
    const stored = await env.DB.prepare("SELECT token_hash FROM console_links WHERE key_id = ?1")
      .bind(key.record.id)
      .first<{ token_hash: string }>();
    expect(stored!.token_hash).not.toContain(token);
    const audit = await env.DB.prepare("SELECT operation, actor FROM key_events WHERE key_id = ?1 ORDER BY id")
      .bind(key.record.id)
      .all<{ operation: string; actor: string }>();
    expect(audit.results).toEqual([
      { operation: "console_link", actor: "tests" },
      { operation: "console_sign_in", actor: `key:${key.record.id}` },
    ]);
  });

  it("is refused once expired, when unknown, when its key was revoked since, and from another site", async () => {
    const key = await keyWith();
    const expired = (await makeLink(key.record.id)).url.split("#link=")[1]!;
    await env.DB.prepare("UPDATE console_links SET expires_at = ?2 WHERE key_id = ?1")
      .bind(key.record.id, new Date(Date.now() - 1000).toISOString())
      .run();
    expect((await errorBodyOf(await redeem(expired))).code).toBe("invalid_console_link");
    expect((await errorBodyOf(await redeem("A".repeat(43)))).code).toBe("invalid_console_link");
    expect((await errorBodyOf(await redeem("not a token"))).code).toBe("invalid_console_link");
    const crossSite = (await makeLink(key.record.id)).url.split("#link=")[1]!;
    expect((await errorBodyOf(await redeem(crossSite, "https://evil.example"))).code).toBe("cross_site_request");
    await api(`/admin/keys/${key.record.id}/revoke`, {
      method: "POST",
      key: null,
      headers: { Authorization: OPERATOR },
    });
    expect((await errorBodyOf(await redeem(crossSite))).code).toBe("invalid_console_link");
  });

  it("is given only for a key that exists and works", async () => {
    const missing = await api("/admin/keys/key_0000000000000000/console-link", {
      method: "POST",
      key: null,
      headers: { Authorization: OPERATOR },
    });
    expect(missing.status).toBe(404);
  });
});

describe("what reaches the logs", () => {
  it("no key, secret, link token or cookie appears in a log line, whatever the console did", async () => {
    const lines: string[] = [];
    for (const level of ["log", "info", "warn", "error"] as const) {
      vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
    }
    const key = await keyWith();
    const { cookie } = await signIn(key);
    const link = await (
      await api(`/admin/keys/${key.record.id}/console-link`, {
        method: "POST",
        key: null,
        headers: { Authorization: OPERATOR },
      })
    ).json<{ url: string }>();
    const token = link.url.split("#link=")[1]!;
    const redeemed = await api("/v2/console/session/link", {
      method: "POST",
      key: null,
      headers: { "Content-Type": "application/json", Origin: ORIGIN },
      body: JSON.stringify({ token }),
    });
    const json = { "Content-Type": "application/json" };
    const created = await (
      await withCookie(cookie, "/v2/webhook-endpoints", {
        method: "POST",
        headers: json,
        body: JSON.stringify({ url: "https://receiver.example/hook" }),
      })
    ).json<{ id: string; secret: string }>();
    const rotatedSecret = await (
      await withCookie(cookie, `/v2/webhook-endpoints/${created.id}/rotate-secret`, {
        method: "POST",
        headers: json,
        body: "{}",
      })
    ).json<{ secret: string }>();
    const rotatedKey = await (
      await withCookie(cookie, `/v2/keys/${key.record.id}/rotate`, { method: "POST", headers: json, body: "{}" })
    ).json<{ key: string }>();
    await withCookie(cookie, "/v2/console/session", { method: "DELETE" });
    const secrets = [
      key.key,
      cookie,
      token,
      /^__Host-so_console=([^;]+)/.exec(redeemed.headers.get("Set-Cookie")!)![1]!,
      created.secret,
      rotatedSecret.secret,
      rotatedKey.key,
    ];
    expect(secrets.every((secret) => secret.length > 20)).toBe(true);
    // Every request above wrote its log line.
    const routes = lines.map((line) => /"route":"([^"]+)"/.exec(line)?.[1]);
    expect(routes).toEqual(
      expect.arrayContaining([
        "/v2/console/session",
        "/admin/keys/{keyId}/console-link",
        "/v2/console/session/link",
        "/v2/webhook-endpoints",
        "/v2/webhook-endpoints/{endpointId}/rotate-secret",
        "/v2/keys/{keyId}/rotate",
      ]),
    );
    for (const secret of secrets) expect(lines.filter((line) => line.includes(secret))).toEqual([]);
  });
});
