import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { forgetIsolateMemory } from "../../../src/app/isolate-memory";
import { GITHUB_SECRET_SCANNING_KEYS_URL } from "../../../src/framework/read-config";
import { sha256Hex } from "../../../src/lib/digest";
import { findKeyById } from "../../../src/keys/lookup";
import { ANONYMOUS_LIMITS, NEVER_BANNED, PARTNER_LIMITS, UNCHANGING_REPORT_LIMITS } from "../../../src/account/plans";
import { generateApiKey } from "../../../src/keys/issue-key";
import { api, apiWith, errorBodyOf } from "../../support/request";
import { storeTestKey } from "../../support/test-keys";
import { GITHUB_SAMPLE, githubLikeSigner, publishedKeys } from "../../support/github-secret-scanning";
import { freshWebhookOwner, makeEndpoint, withoutDispatcher } from "../../support/webhook-fixtures";
import { countingKv, interceptD1 } from "../../support/faults";
import { MAX_REPORT_TOKENS, MAX_REVOCATIONS_PER_REPORT } from "../../../src/revocation/report-leaked-tokens";

/**
 * GitHub's secret scanning partner endpoint (docs/operations.md#secret-scanning),
 * against a key server that answers as GitHub's does: the sample key GitHub's
 * documentation names, and a key of the test's own signing as GitHub signs.
 */
const SIGNER_ID = "0123456789abcdef0123456789abcdef0123456789abcdef0123456789abcdef";
let signer: Awaited<ReturnType<typeof githubLikeSigner>>;
let keyFetches = 0;
/** GitHub's key server answering 503 to every fetch. */
let keyServerDown = false;

beforeEach(async () => {
  signer ??= await githubLikeSigner();
  keyFetches = 0;
  keyServerDown = false;
  forgetIsolateMemory();
  const realFetch = globalThis.fetch;
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url !== GITHUB_SECRET_SCANNING_KEYS_URL) return realFetch(input, init);
    keyFetches += 1;
    if (keyServerDown) return new Response("unavailable", { status: 503 });
    // GitHub's REST API refuses a request without a User-Agent, as its documentation says, with this answer.
    if (!new Request(url, init).headers.get("User-Agent"))
      return new Response(
        "Request forbidden by administrative rules. Please make sure your request has a User-Agent header " +
          "(https://docs.github.com/en/rest/overview/resources-in-the-rest-api#user-agent-required).",
        { status: 403 },
      );
    return Response.json(
      publishedKeys(
        { id: GITHUB_SAMPLE.keyIdentifier, pem: GITHUB_SAMPLE.publicKey, current: false },
        { id: SIGNER_ID, pem: signer.pem },
      ),
    );
  });
});
afterEach(() => vi.restoreAllMocks());

/** A token in this service's key format that is no key: a report of it revokes nothing, but could have. */
const UNKNOWN_KEY = generateApiKey("so_live_");

/** Where GitHub's reports come from in a test: one address, unless the test bans one of its own. */
const GITHUB_ADDRESS = "203.0.113.77";
function report(body: string, headers: Record<string, string>, address = GITHUB_ADDRESS) {
  return apiWith(withoutDispatcher(), "/secret-scanning/github", {
    method: "POST",
    key: null,
    body,
    headers: { "Content-Type": "application/json", "CF-Connecting-IP": address, ...headers },
  });
}
const signed = async (matches: unknown[], address = GITHUB_ADDRESS) => {
  const body = JSON.stringify(matches);
  return report(
    body,
    { "Github-Public-Key-Identifier": SIGNER_ID, "Github-Public-Key-Signature": await signer.sign(body) },
    address,
  );
};

/** Other isolates spend GitHub's minute, a lease at a time, as its object grants them. */
async function spendGithubsMinute(): Promise<void> {
  const partner = env.ACCOUNTS.getByName("partner:github");
  for (let ask = 0, granted = 0; granted < PARTNER_LIMITS.perMinute; ask++) {
    const lease = await partner.acquire({
      id: `elsewhere-${ask}`,
      limits: PARTNER_LIMITS,
      ban: NEVER_BANNED,
      want: PARTNER_LIMITS.perMinute,
      speculative: false,
    });
    granted += lease.granted;
  }
}

describe("GitHub's secret scanning reports", () => {
  it("accept GitHub's documented sample request, signed by the key it names, and answer GitHub's feedback", async () => {
    const response = await report(GITHUB_SAMPLE.body, {
      "Github-Public-Key-Identifier": GITHUB_SAMPLE.keyIdentifier,
      "Github-Public-Key-Signature": GITHUB_SAMPLE.signature,
    });
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([
      { token_hash: await sha256Hex("some_token"), token_type: "some_type", label: "false_positive" },
    ]);
  });

  it("refuse the sample with one byte of its body changed, and a report with no signature, 401 in the Error shape", async () => {
    const changed = GITHUB_SAMPLE.body.replace("some_token", "some_tokeN");
    const forged = await report(changed, {
      "Github-Public-Key-Identifier": GITHUB_SAMPLE.keyIdentifier,
      "Github-Public-Key-Signature": GITHUB_SAMPLE.signature,
    });
    expect(await errorBodyOf(forged)).toMatchObject({
      status: 401,
      code: "invalid_signature",
      message: expect.stringContaining("does not verify"),
    });
    expect(forged.headers.get("WWW-Authenticate")).toContain("Github-Public-Key-Signature");
    expect(await errorBodyOf(await report(GITHUB_SAMPLE.body, {}))).toMatchObject({ code: "invalid_signature" });
    const unknownKey = await report(GITHUB_SAMPLE.body, {
      "Github-Public-Key-Identifier": "f".repeat(64),
      "Github-Public-Key-Signature": GITHUB_SAMPLE.signature,
    });
    expect(await errorBodyOf(unknownKey)).toMatchObject({
      code: "invalid_signature",
      message: expect.stringContaining("publishes no key"),
    });
  });

  it("revoke a live key as leaked before answering, with where it was found; its endpoints end; a replay changes nothing", async () => {
    await freshWebhookOwner();
    const leaked = await storeTestKey({ scopes: ["orders:read", "webhooks:manage", "keys:manage"] });
    const owner = await storeTestKey({
      scopes: ["orders:read", "webhooks:manage", "keys:manage"],
      budget: leaked.record.id,
    });
    const planted = await makeEndpoint(leaked.key, { url: "https://attacker.example/planted" });
    const revokedBefore = await storeTestKey({ revokedAt: "2026-01-01T00:00:00Z" });
    const url = "https://github.com/octocat/Hello-World/blob/12345600b9cbe38a219f39a9941c9319b600c002/foo/bar.txt";
    const matches = [
      { token: leaked.key, type: "store_orders_api_key", url, source: "commit" },
      { token: revokedBefore.key, type: "store_orders_api_key", url, source: "content" },
      { token: "so_live_NotAKeyAtAllNotAKeyAtAllNotAKeyAt", type: "store_orders_api_key", url, source: "content" },
    ];
    const response = await signed(matches);
    expect(response.status).toBe(200);
    expect(await response.json()).toEqual([
      { token_hash: await sha256Hex(leaked.key), token_type: "store_orders_api_key", label: "true_positive" },
      { token_hash: await sha256Hex(revokedBefore.key), token_type: "store_orders_api_key", label: "false_positive" },
      { token_hash: await sha256Hex(matches[2]!.token), token_type: "store_orders_api_key", label: "false_positive" },
    ]);
    const stored = (await findKeyById(env, leaked.record.id))!;
    expect(stored).toMatchObject({ revokedAt: expect.any(String), revokedReason: "leaked" });
    expect(await errorBodyOf(await api("/v1/store/orders", { key: leaked.key }))).toMatchObject({
      code: "invalid_api_key",
    });
    const row = await env.DB.prepare("SELECT actor, changes FROM key_events WHERE key_id = ?1 AND operation = 'revoke'")
      .bind(leaked.record.id)
      .first<{ actor: string; changes: string }>();
    expect(row!.actor).toBe("github-secret-scanning");
    expect(JSON.parse(row!.changes)).toMatchObject({
      reason: "leaked",
      foundAt: url,
      source: "commit",
      endpointsDisabled: [planted.id],
    });
    const endpoint = await (await api(`/v2/webhook-endpoints/${planted.id}`, { key: owner.key })).json<{
      status: string;
    }>();
    expect(endpoint.status).toBe("disabled");
    // The owner looks, and enables it again: GitHub sending the same report again undoes nothing.
    expect(
      (
        await apiWith(withoutDispatcher(), `/v2/webhook-endpoints/${planted.id}`, {
          method: "PATCH",
          key: owner.key,
          headers: { "Content-Type": "application/json" },
          body: JSON.stringify({ status: "enabled", confirmUrl: "https://attacker.example/planted" }),
        })
      ).status,
    ).toBe(200);
    const replay = await signed(matches);
    expect((await replay.json<{ label: string }[]>()).map((feedback) => feedback.label)).toEqual([
      "false_positive",
      "false_positive",
      "false_positive",
    ]);
    expect(
      (await (await api(`/v2/webhook-endpoints/${planted.id}`, { key: owner.key })).json<{ status: string }>()).status,
    ).toBe("enabled");
    expect(
      await env.DB.prepare("SELECT count(*) AS n FROM key_events WHERE key_id = ?1 AND operation = 'revoke'")
        .bind(leaked.record.id)
        .first<number>("n"),
    ).toBe(1);
  });

  it("finish a leak whose first report failed part way: sent again, the key's endpoints are disabled and it is a true positive", async () => {
    await freshWebhookOwner();
    const leaked = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"] });
    const planted = await makeEndpoint(leaked.key, { url: "https://attacker.example/half" });
    const matches = [
      { token: leaked.key, type: "store_orders_api_key", url: "https://github.com/o/r/blob/x/.env", source: "commit" },
    ];
    const body = JSON.stringify(matches);
    const headers = {
      "Content-Type": "application/json",
      "CF-Connecting-IP": GITHUB_ADDRESS,
      "Github-Public-Key-Identifier": SIGNER_ID,
      "Github-Public-Key-Signature": await signer.sign(body),
    };
    // D1 refuses the endpoint's disabling: the key is revoked and refused, its leak not yet ended.
    const failing = interceptD1({
      prepare: (statement, sql) =>
        sql.includes("disabled_for_leak = ?2")
          ? ({
              bind: () => ({ run: () => Promise.reject(new Error("D1_ERROR: Network connection lost.")) }),
            } as unknown as D1PreparedStatement)
          : statement,
    });
    const first = await apiWith({ ...withoutDispatcher(), DB: failing }, "/secret-scanning/github", {
      method: "POST",
      key: null,
      body,
      headers,
    });
    expect(first.status).toBe(503);
    expect(await errorBodyOf(await api("/v1/store/orders", { key: leaked.key }))).toMatchObject({
      code: "invalid_api_key",
    });
    const stored = (await findKeyById(env, leaked.record.id))!;
    expect(stored).toMatchObject({ revokedReason: "leaked" });
    expect(stored.leakEndedAt).toBeUndefined();
    // GitHub sends it again.
    const again = await apiWith(withoutDispatcher(), "/secret-scanning/github", {
      method: "POST",
      key: null,
      body,
      headers,
    });
    expect(await again.json()).toEqual([
      { token_hash: await sha256Hex(leaked.key), token_type: "store_orders_api_key", label: "true_positive" },
    ]);
    const owner = await storeTestKey({ scopes: ["orders:read", "webhooks:manage"], budget: leaked.record.id });
    expect(
      (await (await api(`/v2/webhook-endpoints/${planted.id}`, { key: owner.key })).json<{ status: string }>()).status,
    ).toBe("disabled");
  });

  it("change nothing when the signature fails: the key reported stays live", async () => {
    const live = await storeTestKey();
    const body = JSON.stringify([{ token: live.key, type: "store_orders_api_key", url: "", source: "content" }]);
    const forged = await report(body, {
      "Github-Public-Key-Identifier": SIGNER_ID,
      "Github-Public-Key-Signature": await signer.sign(`${body} `),
    });
    expect(await errorBodyOf(forged)).toMatchObject({ status: 401, code: "invalid_signature" });
    expect((await api("/v1/store/orders", { key: live.key })).status).toBe(200);
  });

  it("take at most 1,000 matches and 1 MB a report: 413 beyond, in the Error shape", async () => {
    const match = { token: "x", type: "t", url: "", source: "content" };
    expect(await errorBodyOf(await signed(Array.from({ length: 1_001 }, () => match)))).toMatchObject({
      status: 413,
      code: "body_too_large",
    });
    expect((await signed(Array.from({ length: 1_000 }, () => match))).status).toBe(200);
    const huge = [{ ...match, type: "t".repeat(1_048_576) }];
    expect(await errorBodyOf(await signed(huge))).toMatchObject({ status: 413, code: "body_too_large" });
  });

  it("count a verified report on the partner's own budget, never its address group's; refuse a group banned here unread", async () => {
    // Mid-minute on a fake clock: the address's minute must not end among its requests.
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.UTC(2030, 5, 1, 12, 0, 15));
      const address = "203.0.113.78";
      const verified = await signed([{ token: UNKNOWN_KEY, type: "t", url: "", source: "content" }], address);
      expect(verified.status).toBe(200);
      expect(verified.headers.get("X-RateLimit-Limit")).toBe(String(PARTNER_LIMITS.perMinute));
      // The address's keyless callers spend its minute and are banned.
      let banned = false;
      for (let i = 0; i < ANONYMOUS_LIMITS.perMinute + 30 && !banned; i++) {
        const keyless = await api("/v1/store/orders", { key: null, headers: { "CF-Connecting-IP": address } });
        banned = (await keyless.json<{ code?: string }>()).code === "api_key_banned";
      }
      expect(banned).toBe(true);
      // From a group banned here, a report is refused before its signature is checked (its body unread).
      const verify = vi.spyOn(crypto.subtle, "verify");
      const refused = await signed([{ token: UNKNOWN_KEY, type: "t", url: "", source: "content" }], address);
      expect(await errorBodyOf(refused)).toMatchObject({ code: "api_key_banned", status: 429 });
      expect(refused.headers.get("Retry-After")).not.toBeNull();
      expect(verify).not.toHaveBeenCalled();
    } finally {
      vi.useRealTimers();
    }
  });

  it("never let replays of a report that changes nothing spend GitHub's budget: after 1,100 in a minute, a genuine report still revokes", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.UTC(2030, 6, 1, 12, 0, 5));
      const sample = {
        "Github-Public-Key-Identifier": GITHUB_SAMPLE.keyIdentifier,
        "Github-Public-Key-Signature": GITHUB_SAMPLE.signature,
      };
      const codes = new Map<string, number>();
      for (let i = 0; i < 1_100; i++) {
        const response = await report(GITHUB_SAMPLE.body, sample);
        const code = response.status === 200 ? "ok" : (await errorBodyOf(response)).code;
        if (response.status === 200) await response.arrayBuffer();
        codes.set(code, (codes.get(code) ?? 0) + 1);
      }
      // Its own budget's minute is spent (refused with Retry-After), never banned.
      expect(codes).toEqual(
        new Map([
          ["ok", UNCHANGING_REPORT_LIMITS.perMinute],
          ["rate_limit_exceeded", 1_100 - UNCHANGING_REPORT_LIMITS.perMinute],
        ]),
      );
      const leaked = await storeTestKey();
      vi.setSystemTime(Date.UTC(2030, 6, 1, 12, 0, 6));
      const genuine = await signed([{ token: leaked.key, type: "store_orders_api_key", url: "", source: "content" }]);
      expect(genuine.status).toBe(200);
      expect((await genuine.json<{ label: string }[]>())[0]!.label).toBe("true_positive");
      expect(genuine.headers.get("X-RateLimit-Limit")).toBe(String(PARTNER_LIMITS.perMinute));
      expect((await api("/v1/store/orders", { key: leaked.key })).status).toBe(401);
    } finally {
      vi.useRealTimers();
    }
  });

  it("count a report sent again within the hour on the budget of reports that change nothing, and judge it afresh", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.UTC(2030, 6, 2, 12, 0, 5));
      const unknown = [{ token: UNKNOWN_KEY, type: "t", url: "", source: "content" }];
      const limitOf = (response: Response) => Number(response.headers.get("X-RateLimit-Limit"));
      const first = await signed(unknown);
      expect(limitOf(first)).toBe(PARTNER_LIMITS.perMinute);
      const again = await signed(unknown);
      expect(again.status).toBe(200);
      expect(await again.json()).toEqual(await first.json());
      expect(limitOf(again)).toBe(UNCHANGING_REPORT_LIMITS.perMinute);
      // An hour on, the same bytes are GitHub's again.
      vi.setSystemTime(Date.UTC(2030, 6, 2, 13, 0, 6));
      expect(limitOf(await signed(unknown))).toBe(PARTNER_LIMITS.perMinute);
    } finally {
      vi.useRealTimers();
    }
  });

  it("refuse GitHub past its budget with Retry-After, and never ban it however many it sends", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.UTC(2030, 6, 3, 12, 0, 5));
      await spendGithubsMinute();
      const codes = new Set<string>();
      for (let i = 0; i < 60; i++) {
        const refused = await signed([
          {
            token: UNKNOWN_KEY,
            type: "store_orders_api_key",
            url: `https://github.com/${i}`,
            source: "",
          },
        ]);
        expect(refused.status).toBe(429);
        expect(Number(refused.headers.get("Retry-After"))).toBeGreaterThan(0);
        codes.add((await errorBodyOf(refused)).code);
      }
      expect(codes).toEqual(new Set(["rate_limit_exceeded"]));
    } finally {
      vi.useRealTimers();
    }
  });

  it("let an operator lift GitHub's refusal: its minute starts over, and its next report is admitted", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.UTC(2030, 6, 4, 12, 0, 5));
      await spendGithubsMinute();
      const report = (i: number) =>
        signed([{ token: UNKNOWN_KEY, type: "store_orders_api_key", url: `https://github.com/lift/${i}`, source: "" }]);
      expect((await report(0)).status).toBe(429);
      const operator = { Authorization: "Bearer operator-token-for-tests" };
      const unknown = await api("/admin/partners/gitlab/unban", { method: "POST", key: null, headers: operator });
      expect(await errorBodyOf(unknown)).toMatchObject({ status: 404, code: "not_found" });
      const lifted = await api("/admin/partners/github/unban", { method: "POST", key: null, headers: operator });
      expect(lifted.status).toBe(200);
      expect(await lifted.json()).toMatchObject({ partner: "github" });
      // This isolate learns it at its next call to the object: within a lease's length.
      vi.setSystemTime(Date.UTC(2030, 6, 4, 12, 0, 11));
      expect((await report(1)).status).toBe(200);
      const audit = await env.DB.prepare("SELECT actor FROM key_events WHERE key_id = 'partner:github'").first<string>(
        "actor",
      );
      expect(audit).toBe("tests");
    } finally {
      vi.useRealTimers();
    }
  });

  it("answer 503 with Retry-After while GitHub's keys cannot be fetched, changing nothing, and judge the report once they can", async () => {
    const leaked = await storeTestKey();
    const matches = [{ token: leaked.key, type: "store_orders_api_key", url: "", source: "content" }];
    keyServerDown = true;
    vi.spyOn(console, "error").mockImplementation(() => {});
    const unavailable = await signed(matches);
    expect(await errorBodyOf(unavailable)).toMatchObject({ status: 503, code: "service_unavailable" });
    expect(unavailable.headers.get("Retry-After")).toBe("60");
    expect((await api("/v1/store/orders", { key: leaked.key })).status).toBe(200);
    keyServerDown = false;
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      // GitHub sends it again after the Retry-After; the keys are fetched again.
      vi.setSystemTime(Date.now() + 61_000);
      const judged = await signed(matches);
      expect((await judged.json<{ label: string }[]>())[0]!.label).toBe("true_positive");
    } finally {
      vi.useRealTimers();
    }
  });

  it("revoke at most 50 live keys a report, 503 for the rest, which GitHub's next sending revokes", async () => {
    const keys = await Promise.all(Array.from({ length: MAX_REVOCATIONS_PER_REPORT + 1 }, () => storeTestKey()));
    const matches = keys.map((key) => ({ token: key.key, type: "store_orders_api_key", url: "", source: "content" }));
    const first = await signed(matches);
    expect(await errorBodyOf(first)).toMatchObject({ status: 503, code: "service_unavailable" });
    expect(first.headers.get("Retry-After")).toBe("1");
    const live = async () =>
      (await Promise.all(keys.map(async (key) => (await api("/v1/store/orders", { key: key.key })).status))).filter(
        (status) => status === 200,
      ).length;
    expect(await live()).toBe(1);
    const again = await signed(matches);
    const labels = (await again.json<{ label: string }[]>()).map((feedback) => feedback.label);
    expect(labels.filter((label) => label === "true_positive")).toHaveLength(1);
    expect(await live()).toBe(0);
  });

  it("read a report's tokens from KV a hundred at a time: 1,000 matches are 10 reads", async () => {
    const counted = countingKv();
    const tokens = Array.from({ length: MAX_REPORT_TOKENS }, () => generateApiKey("so_live_"));
    const body = JSON.stringify(tokens.map((token) => ({ token, type: "store_orders_api_key", url: "", source: "" })));
    const response = await apiWith({ ...withoutDispatcher(), API_KEYS: counted.kv }, "/secret-scanning/github", {
      method: "POST",
      key: null,
      body,
      headers: {
        "Content-Type": "application/json",
        "CF-Connecting-IP": GITHUB_ADDRESS,
        "Github-Public-Key-Identifier": SIGNER_ID,
        "Github-Public-Key-Signature": await signer.sign(body),
      },
    });
    expect(response.status).toBe(200);
    expect((await response.json<unknown[]>()).length).toBe(MAX_REPORT_TOKENS);
    expect(counted.operations()).toBe(MAX_REPORT_TOKENS / 100);
  });

  it("fetch GitHub's keys once for many reports, and again for an identifier they do not name, at most once a minute", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.UTC(2031, 0, 1, 12, 0, 0));
      for (let i = 0; i < 3; i++) expect((await signed([{ token: "x", type: "t" }])).status).toBe(200);
      expect(keyFetches).toBe(1);
      const unknown = () =>
        report("[]", {
          "Github-Public-Key-Identifier": "e".repeat(64),
          "Github-Public-Key-Signature": GITHUB_SAMPLE.signature,
        });
      // Within the minute of the last fetch, an unknown identifier is refused from the list in hand.
      for (let i = 0; i < 3; i++) expect((await unknown()).status).toBe(401);
      expect(keyFetches).toBe(1);
      vi.setSystemTime(Date.UTC(2031, 0, 1, 12, 1, 1));
      for (let i = 0; i < 3; i++) expect((await unknown()).status).toBe(401);
      expect(keyFetches).toBe(2);
      // A day on, the list is fetched again even for an identifier it names.
      vi.setSystemTime(Date.UTC(2031, 0, 2, 12, 1, 2));
      expect((await signed([{ token: "x", type: "t" }])).status).toBe(200);
      expect(keyFetches).toBe(3);
    } finally {
      vi.useRealTimers();
    }
  });
});
