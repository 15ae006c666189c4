import { env } from "cloudflare:workers";
import { beforeEach, describe, expect, it, vi } from "vitest";
import { sha256Hex } from "../../../src/lib/digest";
import { REVOKE_OPERATOR } from "../../../src/operator/operator-table";
import { OPERATOR_COOKIE, pruneOperatorSessions } from "../../../src/operator/operator-sessions";
import { pruneConsoleSessions } from "../../../src/console/session-table";
import { pruneEndpointAudit } from "../../../src/webhook-delivery/endpoint-audit-rows";
import { INSERT_OPERATOR_LINK } from "../../../src/operator/operator-links";
import { SESSION_COOKIE } from "../../../src/console-kit/session-cookie";
import { ANONYMOUS_LIMITS, OPERATOR_LIMITS } from "../../../src/account/plans";
import { accountStub } from "../../../src/account/account-stub";
import { api, apiWith, errorBodyOf, ORIGIN } from "../../support/request";
import { storeTestKey, type TestKey } from "../../support/test-keys";
import { addOperator } from "../../support/operators";
import { freshWebhookOwner, makeEndpoint } from "../../support/webhook-fixtures";

/**
 * The operators' console sessions (docs/operations.md#the-operators-console):
 * a token or a single-use link exchanged for a sealed cookie of their own,
 * ended by sign-out or the operator's revocation at once, never valid where
 * a caller's credential is, nor the reverse.
 */

let key: TestKey;
beforeEach(async () => {
  await env.DB.prepare("DELETE FROM operators").run();
  key = await storeTestKey({ plan: "free" });
});

/** A link as `npm run keys -- operator-link` makes one; its token. */
async function addLink(
  operator: string,
  expiresAt = new Date(Date.now() + 15 * 60_000).toISOString(),
): Promise<string> {
  const token = btoa(String.fromCharCode(...crypto.getRandomValues(new Uint8Array(32))))
    .replace(/\+/g, "-")
    .replace(/\//g, "_")
    .replace(/=+$/, "");
  await env.DB.prepare(INSERT_OPERATOR_LINK)
    .bind(await sha256Hex(token), operator, new Date().toISOString(), expiresAt, "cli:tests")
    .run();
  return token;
}

const cookieOf = (response: Response, name = OPERATOR_COOKIE) =>
  new RegExp(`^__Host-${name}=([^;]+)`).exec(response.headers.get("Set-Cookie") ?? "")?.[1] ?? "";

async function signIn(token: string): Promise<{ response: Response; cookie: string }> {
  const response = await api("/admin/session", {
    method: "POST",
    key: null,
    headers: { Authorization: `Bearer ${token}`, Origin: ORIGIN },
  });
  return { response, cookie: cookieOf(response) };
}

/** What a browser sends with the operators' cookie: no token, and Origin on writes. */
const withCookie = (cookie: string, path: string, method = "GET", body?: unknown) =>
  api(path, {
    method,
    key: null,
    headers: {
      Cookie: `__Host-${OPERATOR_COOKIE}=${cookie}`,
      ...(method !== "GET" && { Origin: ORIGIN }),
      ...(body !== undefined && { "Content-Type": "application/json" }),
    },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });

describe("signing in to the operators' console", () => {
  it("exchanges a named operator's token for a sealed HttpOnly, Secure, SameSite=Strict cookie that acts as them, audited under their name", async () => {
    const ana = await addOperator("ana@example.com");
    const { response, cookie } = await signIn(ana);
    expect(response.status).toBe(201);
    expect(await response.json()).toMatchObject({ operator: "ana@example.com", via: "session" });
    expect(response.headers.get("Set-Cookie")).toMatch(
      /^__Host-so_operator=[^;]+; Path=\/; HttpOnly; SameSite=Strict; Max-Age=43200; Secure$/,
    );
    expect(response.headers.get("Set-Cookie")).not.toContain(ana);
    expect(await (await withCookie(cookie, "/admin/session")).json()).toMatchObject({
      operator: "ana@example.com",
      via: "session",
    });
    expect(
      (await withCookie(cookie, `/admin/keys/${key.record.id}/limits`, "POST", { perMinute: 7, perDay: 70 })).status,
    ).toBe(200);
    const row = await env.DB.prepare("SELECT operation, actor FROM key_events WHERE key_id = ?1")
      .bind(key.record.id)
      .first();
    expect(row).toEqual({ operation: "update", actor: "ana@example.com" });
    const session = await env.DB.prepare("SELECT operator, via, ended_at FROM operator_sessions").first();
    expect(session).toEqual({ operator: "ana@example.com", via: "token", ended_at: null });
  });

  it("signs in with a single-use link, once; a used, expired or unknown link is refused", async () => {
    await addOperator("ben");
    const link = await addLink("ben");
    const redeem = (token: string) =>
      api("/admin/session/link", {
        method: "POST",
        key: null,
        headers: { "Content-Type": "application/json", Origin: ORIGIN },
        body: JSON.stringify({ token }),
      });
    const first = await redeem(link);
    expect(first.status).toBe(201);
    expect(await (await withCookie(cookieOf(first), "/admin/session")).json()).toMatchObject({
      operator: "ben",
      via: "session",
    });
    expect(await errorBodyOf(await redeem(link))).toMatchObject({ code: "invalid_console_link", status: 401 });
    expect(
      await errorBodyOf(await redeem(await addLink("ben", new Date(Date.now() - 1_000).toISOString()))),
    ).toMatchObject({ code: "invalid_console_link" });
    expect(await errorBodyOf(await redeem("A".repeat(43)))).toMatchObject({ code: "invalid_console_link" });
    // A link of an operator revoked since it was made signs no one in.
    const late = await addLink("ben");
    await env.DB.prepare(REVOKE_OPERATOR).bind("ben", new Date().toISOString(), "cli:tests").run();
    expect(await errorBodyOf(await redeem(late))).toMatchObject({ code: "invalid_console_link" });
  });

  it("names who made the link beside the operator in every audit row of the session it opened, when another made it", async () => {
    const ana = await addOperator("ana");
    const linkBy = async (token: string) => {
      const made = await api("/admin/operators/ana/link", {
        method: "POST",
        key: null,
        headers: { Authorization: `Bearer ${token}` },
      });
      const link = ((await made.json()) as { url: string }).url.split("#link=")[1]!;
      return cookieOf(
        await api("/admin/session/link", {
          method: "POST",
          key: null,
          headers: { "Content-Type": "application/json", Origin: ORIGIN },
          body: JSON.stringify({ token: link }),
        }),
      );
    };
    const actors: string[] = [];
    for (const maker of ["operator-token-for-tests", ana]) {
      const cookie = await linkBy(maker);
      expect(
        (await withCookie(cookie, `/admin/keys/${key.record.id}/limits`, "POST", { perMinute: 7, perDay: 70 })).status,
      ).toBe(200);
      const row = await env.DB.prepare("SELECT actor FROM key_events WHERE key_id = ?1 ORDER BY id DESC")
        .bind(key.record.id)
        .first<{ actor: string }>();
      actors.push(row!.actor);
    }
    expect(actors).toEqual(["ana (link by tests)", "ana"]);
  });

  it("ends at sign-out and at the operator's revocation, from the next request on; the others go on", async () => {
    const [ana, ben] = [await addOperator("ana"), await addOperator("ben")];
    const { cookie: anaCookie } = await signIn(ana);
    const { cookie: benCookie } = await signIn(ben);
    const { cookie: benSecond } = await signIn(ben);
    await env.DB.prepare(REVOKE_OPERATOR).bind("ana", new Date().toISOString(), "cli:tests").run();
    const revoked = await withCookie(anaCookie, "/admin/pipeline");
    const refusal = await errorBodyOf(revoked);
    expect(refusal).toMatchObject({ code: "session_ended", status: 401 });
    expect(refusal.message).toContain("revoked");
    expect(revoked.headers.get("Set-Cookie")).toMatch(/^__Host-so_operator=; .*Max-Age=0/);

    const out = await withCookie(benCookie, "/admin/session", "DELETE");
    expect(out.status).toBe(204);
    expect(out.headers.get("Set-Cookie")).toMatch(/Max-Age=0/);
    expect(await errorBodyOf(await withCookie(benCookie, "/admin/pipeline"))).toMatchObject({ code: "session_ended" });
    expect((await withCookie(benSecond, "/admin/pipeline")).status).toBe(200);
  });

  it("ends the session a browser already had when it signs in again, with a token or a link, as the callers' console does", async () => {
    const [ana, ben] = [await addOperator("ana"), await addOperator("ben")];
    const { cookie: first } = await signIn(ana);
    const again = await api("/admin/session", {
      method: "POST",
      key: null,
      headers: { Authorization: `Bearer ${ben}`, Origin: ORIGIN, Cookie: `__Host-${OPERATOR_COOKIE}=${first}` },
    });
    expect(again.status).toBe(201);
    expect(await errorBodyOf(await withCookie(first, "/admin/pipeline"))).toMatchObject({ code: "session_ended" });
    const second = cookieOf(again);
    const byLink = await api("/admin/session/link", {
      method: "POST",
      key: null,
      headers: { "Content-Type": "application/json", Origin: ORIGIN, Cookie: `__Host-${OPERATOR_COOKIE}=${second}` },
      body: JSON.stringify({ token: await addLink("ana") }),
    });
    expect(byLink.status).toBe(201);
    expect(await errorBodyOf(await withCookie(second, "/admin/pipeline"))).toMatchObject({ code: "session_ended" });
    expect(await (await withCookie(cookieOf(byLink), "/admin/session")).json()).toMatchObject({ operator: "ana" });
  });

  it("refuses a write that rides on the cookie from another site, or with no Origin", async () => {
    const { cookie } = await signIn(await addOperator("ana"));
    const fromElsewhere = await api(`/admin/keys/${key.record.id}/unban`, {
      method: "POST",
      key: null,
      headers: { Cookie: `__Host-${OPERATOR_COOKIE}=${cookie}`, Origin: "https://evil.example" },
    });
    expect(await errorBodyOf(fromElsewhere)).toMatchObject({ code: "cross_site_request", status: 403 });
    const noOrigin = await api(`/admin/keys/${key.record.id}/unban`, {
      method: "POST",
      key: null,
      headers: { Cookie: `__Host-${OPERATOR_COOKIE}=${cookie}` },
    });
    expect(await errorBodyOf(noOrigin)).toMatchObject({ code: "cross_site_request" });
    // A sign-in itself started by another site (login CSRF) is refused too.
    const crossSignIn = await api("/admin/session", {
      method: "POST",
      key: null,
      headers: { Authorization: "Bearer operator-token-for-tests", Origin: "https://evil.example" },
    });
    expect(await errorBodyOf(crossSignIn)).toMatchObject({ code: "cross_site_request" });
  });

  it("keeps the two consoles apart: an operator's cookie is no key on /v2, and a caller's cookie or key is no operator on /admin", async () => {
    const { cookie } = await signIn("operator-token-for-tests");
    const onV2 = await api("/v2/console/session", {
      key: null,
      headers: { Cookie: `__Host-${OPERATOR_COOKIE}=${cookie}` },
    });
    expect(await errorBodyOf(onV2)).toMatchObject({ code: "missing_api_key", status: 401 });
    // The operators' cookie under the callers' name does not open: it is sealed for another purpose.
    const renamed = await api("/v2/console/session", {
      key: null,
      headers: { Cookie: `__Host-${SESSION_COOKIE}=${cookie}` },
    });
    expect(await errorBodyOf(renamed)).toMatchObject({ code: "session_ended", status: 401 });

    const caller = await api("/v2/console/session", { method: "POST", key: key.key, headers: { Origin: ORIGIN } });
    const callerCookie = cookieOf(caller, SESSION_COOKIE);
    expect(callerCookie).not.toBe("");
    expect(
      await errorBodyOf(
        await api("/admin/pipeline", { key: null, headers: { Cookie: `__Host-${SESSION_COOKIE}=${callerCookie}` } }),
      ),
    ).toMatchObject({ code: "missing_api_key", status: 401 });
    expect(
      await errorBodyOf(
        await api("/admin/pipeline", { key: null, headers: { Cookie: `__Host-${OPERATOR_COOKIE}=${callerCookie}` } }),
      ),
    ).toMatchObject({ code: "session_ended", status: 401 });
    expect(await errorBodyOf(await api("/admin/pipeline", { key: key.key }))).toMatchObject({
      code: "invalid_api_key",
      status: 401,
    });
  });

  it("counts a session on its own, like a business key, not by its address: a page that reads every few seconds all day is never refused for it", async () => {
    const { cookie } = await signIn(await addOperator("ana"));
    const bySession = await withCookie(cookie, "/admin/pipeline");
    expect(bySession.status).toBe(200);
    expect(bySession.headers.get("X-RateLimit-Limit")).toBe(String(OPERATOR_LIMITS.perMinute));
    // A token is counted on its operator's own budget too, never the address's.
    const byToken = await api("/admin/pipeline", {
      key: null,
      headers: { Authorization: "Bearer operator-token-for-tests" },
    });
    expect(byToken.headers.get("X-RateLimit-Limit")).toBe(String(OPERATOR_LIMITS.perMinute));
    // A cookie this service did not seal earns nothing: the address counts it.
    const forged = await api("/admin/pipeline", {
      key: null,
      headers: { Cookie: `__Host-${OPERATOR_COOKIE}=${cookie.slice(0, -4)}AAAA` },
    });
    expect(forged.headers.get("X-RateLimit-Limit")).toBe(String(ANONYMOUS_LIMITS.perMinute));
    expect(await errorBodyOf(forged)).toMatchObject({ code: "session_ended" });
  });

  it("binds a session the bootstrap token opened to that token: a replaced OPERATOR_TOKEN secret ends it, even under the same name", async () => {
    const { cookie } = await signIn("operator-token-for-tests");
    expect((await withCookie(cookie, "/admin/pipeline")).status).toBe(200);
    const replaced = { ...env, OPERATOR_TOKEN: "tests:a-new-token-after-a-leak" } as Env;
    const answer = await apiWith(replaced, "/admin/pipeline", {
      key: null,
      headers: { Cookie: `__Host-${OPERATOR_COOKIE}=${cookie}` },
    });
    expect(await errorBodyOf(answer)).toMatchObject({ code: "session_ended", status: 401 });
    // A named operator given the bootstrap's name is someone else: the table says whether they are live, not the
    // secret.
    const namesake = await addOperator("tests");
    const { cookie: theirs } = await signIn(namesake);
    await env.DB.prepare(REVOKE_OPERATOR).bind("tests", new Date().toISOString(), "cli:tests").run();
    expect(await errorBodyOf(await withCookie(theirs, "/admin/pipeline"))).toMatchObject({ code: "session_ended" });
  });

  it("counts by the path: a caller's console cookie under /admin spends nothing of the caller's account, an operator's on /v2 nothing of the session's", async () => {
    // A pro key: its account's limit differs from an address's.
    const pro = await storeTestKey({ plan: "pro" });
    const caller = await api("/v2/console/session", { method: "POST", key: pro.key, headers: { Origin: ORIGIN } });
    const callerCookie = cookieOf(caller, SESSION_COOKIE);
    expect(
      (
        await api("/v2/console/session", { key: null, headers: { Cookie: `__Host-${SESSION_COOKIE}=${callerCookie}` } })
      ).headers.get("X-RateLimit-Limit"),
    ).toBe("300");
    const underAdmin = await api("/admin/pipeline", {
      key: null,
      headers: { Cookie: `__Host-${SESSION_COOKIE}=${callerCookie}` },
    });
    expect(underAdmin.headers.get("X-RateLimit-Limit")).toBe(String(ANONYMOUS_LIMITS.perMinute));
    const { cookie } = await signIn(await addOperator("ana"));
    const onV2 = await api("/v2/console/session", {
      key: null,
      headers: { Cookie: `__Host-${OPERATOR_COOKIE}=${cookie}` },
    });
    expect(onV2.headers.get("X-RateLimit-Limit")).toBe(String(ANONYMOUS_LIMITS.perMinute));
  });

  it("stops counting a session on its own once it is found ended: its cookie is counted by the address again", async () => {
    const { cookie } = await signIn(await addOperator("ana"));
    expect((await withCookie(cookie, "/admin/session", "DELETE")).status).toBe(204);
    const first = await withCookie(cookie, "/admin/pipeline");
    expect(await errorBodyOf(first)).toMatchObject({ code: "session_ended" });
    const next = await withCookie(cookie, "/admin/pipeline");
    expect(next.headers.get("X-RateLimit-Limit")).toBe(String(ANONYMOUS_LIMITS.perMinute));
  });

  it("says who is signed in, and how, with a token and no session", async () => {
    const answer = await api("/admin/session", {
      key: null,
      headers: { Authorization: "Bearer operator-token-for-tests" },
    });
    expect(await answer.json()).toEqual({ operator: "tests", via: "token", expiresAt: null });
  });
});

describe("finding keys and an account's page", () => {
  it("finds keys by part of a name, id or first characters, and by plan and state; a bad filter is invalid_query", async () => {
    const pro = await storeTestKey({ plan: "pro", name: "Acme storefront" });
    const search = async (query: string) =>
      (
        await (
          await api(`/admin/keys?${query}`, {
            key: null,
            headers: { Authorization: "Bearer operator-token-for-tests" },
          })
        ).json<{ data: { id: string }[] }>()
      ).data.map(({ id }) => id);
    expect(await search("q=acme")).toEqual([pro.record.id]);
    expect(await search(`q=${pro.key.slice(0, 12)}`)).toEqual([pro.record.id]);
    expect(await search(`q=${pro.record.id.slice(4, 12).toUpperCase()}`)).toEqual([pro.record.id]);
    expect(await search("plan=pro")).toContain(pro.record.id);
    expect(await search("plan=pro")).not.toContain(key.record.id);
    expect(await search("state=revoked&q=acme")).toEqual([]);
    const bad = await api("/admin/keys?state=sleeping", {
      key: null,
      headers: { Authorization: "Bearer operator-token-for-tests" },
    });
    expect(await errorBodyOf(bad)).toMatchObject({ code: "invalid_query", status: 400 });
  });

  it("shows every key of an account on the plan it was moved to, the keys the change did not name too", async () => {
    const operator = { key: null, headers: { Authorization: "Bearer operator-token-for-tests" } };
    const first = await storeTestKey({ plan: "free", name: "Moving shop" });
    const second = await storeTestKey({ plan: "free", name: "Moving shop's deploy", budget: first.record.id });
    const plans = async () =>
      (
        await (
          await api("/admin/keys?q=moving%20shop", operator)
        ).json<{ data: { id: string; plan: string; state: string }[] }>()
      ).data;
    expect(await plans()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: first.record.id, plan: "free" }),
        expect.objectContaining({ id: second.record.id, plan: "free" }),
      ]),
    );
    const moved = await api(`/admin/keys/${second.record.id}`, {
      ...operator,
      method: "PATCH",
      headers: { ...operator.headers, "Content-Type": "application/json" },
      body: JSON.stringify({ plan: "pro" }),
    });
    expect(moved.status).toBe(200);
    expect(await plans()).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ id: first.record.id, plan: "pro" }),
        expect.objectContaining({ id: second.record.id, plan: "pro" }),
      ]),
    );
    // The account writes the entries itself: a change asked of it by any caller reaches the search.
    await accountStub(env.ACCOUNTS, first.record.id).revokeKey(first.record.id, "retired", new Date().toISOString());
    expect(await plans()).toEqual(
      expect.arrayContaining([expect.objectContaining({ id: first.record.id, plan: "pro", state: "revoked" })]),
    );
  });

  it("finds a key whose name is past what KV's metadata holds, its name there cut to fit", async () => {
    const operator = { key: null, headers: { Authorization: "Bearer operator-token-for-tests" } };
    const name = `Tabbed\t${"\u0001".repeat(193)}`;
    const made = await api("/admin/keys", {
      ...operator,
      method: "POST",
      headers: { ...operator.headers, "Content-Type": "application/json" },
      body: JSON.stringify({ plan: "free", name, scopes: ["orders:read", "orders:write", "webhooks:manage"] }),
    });
    expect(made.status).toBe(201);
    const { id } = await made.json<{ id: string }>();
    const found = await (await api("/admin/keys?q=tabbed", operator)).json<{ data: { id: string; name: string }[] }>();
    expect(found.data.map((key) => key.id)).toEqual([id]);
    expect(name.startsWith(found.data[0]!.name)).toBe(true);
  });

  it("finds a banned account's keys by state=banned from the ban's notice until it is lifted, and a key rotated away as grace", async () => {
    const operator = { key: null, headers: { Authorization: "Bearer operator-token-for-tests" } };
    type Found = { id: string; state: string; bannedUntil: string | null };
    const search = async (query: string) =>
      (await (await api(`/admin/keys?${query}`, operator)).json<{ data: Found[] }>()).data;
    const tight = await storeTestKey({ plan: "free", name: "Banned shop", limits: { perMinute: 1, perDay: 1_000 } });
    expect(await search("q=banned%20shop")).toEqual([
      expect.objectContaining({ id: tight.record.id, state: "live", bannedUntil: null }),
    ]);
    let banned = false;
    for (let i = 0; i < 60 && !banned; i++) {
      const response = await api("/v1/store/orders", { key: tight.key });
      banned = response.status === 429 && (await response.json<{ code: string }>()).code === "api_key_banned";
    }
    expect(banned).toBe(true);
    // The account's object writes the notice as the ban starts.
    await vi.waitFor(
      async () => expect((await search("state=banned")).map(({ id }) => id)).toContain(tight.record.id),
      { timeout: 10_000 },
    );
    const [found] = await search("q=banned%20shop");
    expect(found).toMatchObject({ state: "banned", bannedUntil: expect.any(String) });
    expect(Date.parse(found!.bannedUntil!)).toBeGreaterThan(Date.now());
    expect((await api(`/admin/keys/${tight.record.id}/unban`, { ...operator, method: "POST" })).status).toBe(200);
    await vi.waitFor(
      async () =>
        expect(await search("q=banned%20shop")).toEqual([
          expect.objectContaining({ state: "live", bannedUntil: null }),
        ]),
      { timeout: 10_000 },
    );
    expect((await search("state=banned")).map(({ id }) => id)).not.toContain(tight.record.id);

    const rotating = await storeTestKey({ plan: "pro", name: "Rotating shop", scopes: ["orders:read", "keys:manage"] });
    const rotated = await api(`/v2/keys/${rotating.record.id}/rotate`, {
      key: rotating.key,
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ graceSeconds: 3600 }),
    });
    expect(rotated.status).toBe(201);
    const { id: newId } = await rotated.json<{ id: string }>();
    const states = Object.fromEntries((await search("q=rotating%20shop")).map(({ id, state }) => [id, state]));
    expect(states).toEqual({ [rotating.record.id]: "grace", [newId]: "live" });
    expect((await search("state=grace&q=rotating")).map(({ id }) => id)).toEqual([rotating.record.id]);
  });

  it("shows an account's keys, endpoints and audit timeline with who did what, and a lock's reason to the endpoint's owner, never the operator's name", async () => {
    const owner = await freshWebhookOwner();
    const endpoint = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    const ana = await addOperator("ana");
    const as = (path: string, method = "GET", body?: unknown) =>
      api(`/admin${path}`, {
        method,
        key: null,
        headers: { Authorization: `Bearer ${ana}`, ...(body !== undefined && { "Content-Type": "application/json" }) },
        ...(body !== undefined && { body: JSON.stringify(body) }),
      });
    expect((await as(`/keys/${owner.record.id}/limits`, "POST", { perMinute: 9, perDay: 90 })).status).toBe(200);
    expect(
      (await as(`/webhook-endpoints/${endpoint.id}/disable`, "POST", { reason: "its receiver leaks secrets" })).status,
    ).toBe(200);
    const page = await (await as(`/keys/${owner.record.id}/budget`)).json<{
      keys: { id: string }[];
      timeline: { operation: string; actor: string; subject: string }[];
    }>();
    expect(page.keys.map(({ id }) => id)).toContain(owner.record.id);
    const endpoints = await (await as(`/webhook-endpoints?budget=${owner.record.id}`)).json<{
      data: { id: string; disabledReason: string }[];
    }>();
    expect(endpoints.data).toEqual([
      expect.objectContaining({
        id: endpoint.id,
        disabledReason: "disabled by the operator ana: its receiver leaks secrets",
      }),
    ]);
    expect(page.timeline.slice(0, 2)).toEqual([
      expect.objectContaining({ operation: "disable", actor: "ana", subject: endpoint.id }),
      expect.objectContaining({ operation: "update", actor: "ana", subject: owner.record.id }),
    ]);
    // The owner is told why, by an operator, never which one.
    const seen = await (await api(`/v2/webhook-endpoints/${endpoint.id}`, { key: owner.key })).json<{
      disabledBy: string;
      disabledReason: string;
    }>();
    expect(seen).toMatchObject({
      disabledBy: "operator",
      disabledReason: "disabled by an operator: its receiver leaks secrets",
    });
  });
});

describe("the pipeline's figures", () => {
  it("name the Worker version that answered, from its version metadata, so an operator sees which release of a gradual one is live", async () => {
    const bindings = {
      ...env,
      CF_VERSION_METADATA: { id: "0e3b2c1a-version", tag: "release-7", timestamp: "2026-11-27T00:00:00Z" },
    };
    const answer = await apiWith(bindings, "/admin/pipeline", {
      key: null,
      headers: { Authorization: "Bearer operator-token-for-tests" },
    });
    expect((await answer.json<{ worker: unknown }>()).worker).toEqual({ id: "0e3b2c1a-version", tag: "release-7" });
  });
});

describe("what the operators' sessions and the audit keep, and for how long", () => {
  it("ends a session 12 hours after it opened, to the second", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      const opened = Date.UTC(2030, 4, 1, 8, 0, 0);
      vi.setSystemTime(opened);
      const { cookie } = await signIn(await addOperator("twelve@example.com"));
      vi.setSystemTime(opened + 12 * 3_600_000 - 1_000);
      expect((await withCookie(cookie, "/admin/session")).status).toBe(200);
      vi.setSystemTime(opened + 12 * 3_600_000);
      expect((await withCookie(cookie, "/admin/session")).status).toBe(401);
    } finally {
      vi.useRealTimers();
    }
  });

  it("prunes operator sessions and links, console sessions and links a day past their end, and endpoint audit rows past a year; nothing else", async () => {
    const now = Date.UTC(2030, 4, 2, 0, 0, 0);
    const iso = (ms: number) => new Date(ms).toISOString();
    const DAY = 86_400_000;
    const past = iso(now - DAY - 1_000);
    const recent = iso(now - DAY + 60_000);
    await env.DB.batch([
      env.DB.prepare("DELETE FROM operator_sessions"),
      env.DB.prepare("DELETE FROM operator_links"),
      env.DB.prepare("DELETE FROM console_sessions"),
      env.DB.prepare("DELETE FROM console_links"),
      env.DB.prepare("DELETE FROM webhook_endpoint_events"),
      ...[
        ["old", past],
        ["new", recent],
      ].flatMap(([id, expires]) => [
        env.DB.prepare(
          "INSERT INTO operator_sessions (id, operator, via, created_at, expires_at) VALUES (?1, 'o', 'token', ?2, ?2)",
        ).bind(`op-${id}`, expires),
        env.DB.prepare(
          "INSERT INTO operator_links (token_hash, operator, created_at, expires_at, created_by) VALUES " +
            "(?1, 'o', ?2, " +
            "?2, 'cli:t')",
        ).bind(`ol-${id}`, expires),
        env.DB.prepare(
          "INSERT INTO console_sessions (id, key_id, budget, via, created_at, expires_at) VALUES (?1, 'key_x', " +
            "'key_x', 'key', ?2, ?2)",
        ).bind(`cs-${id}`, expires),
        env.DB.prepare(
          "INSERT INTO console_links (token_hash, key_id, created_at, expires_at, created_by) VALUES (?1, 'key_x', " +
            "?2, ?2, 't')",
        ).bind(`cl-${id}`, expires),
      ]),
      env.DB.prepare(
        "INSERT INTO webhook_endpoint_events (event_id, at, operation, endpoint_id, changes, actor) VALUES ('old', " +
          "?1, 'create', 'we_x', '{}', 't')",
      ).bind(iso(now - 366 * DAY)),
      env.DB.prepare(
        "INSERT INTO webhook_endpoint_events (event_id, at, operation, endpoint_id, changes, actor) VALUES ('kept', " +
          "?1, 'create', 'we_x', '{}', 't')",
      ).bind(iso(now - 364 * DAY)),
    ]);
    await pruneOperatorSessions(env.DB, now);
    await pruneConsoleSessions(env.DB, now);
    await pruneEndpointAudit(env.DB, now);
    const ids = async (sql: string) => (await env.DB.prepare(sql).all<{ id: string }>()).results.map((row) => row.id);
    expect(await ids("SELECT id FROM operator_sessions")).toEqual(["op-new"]);
    expect(await ids("SELECT token_hash AS id FROM operator_links")).toEqual(["ol-new"]);
    expect(await ids("SELECT id FROM console_sessions")).toEqual(["cs-new"]);
    expect(await ids("SELECT token_hash AS id FROM console_links")).toEqual(["cl-new"]);
    expect(await ids("SELECT event_id AS id FROM webhook_endpoint_events")).toEqual(["kept"]);
  });
});
