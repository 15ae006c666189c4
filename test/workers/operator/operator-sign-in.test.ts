import { env } from "cloudflare:workers";
import { SignJWT, exportJWK, generateKeyPair, type CryptoKey, type JWTPayload } from "jose";
import { afterEach, beforeAll, beforeEach, describe, expect, it, vi } from "vitest";
import { REVOKE_OPERATOR } from "../../../src/operator/operator-table";
import { ANONYMOUS_LIMITS, OPERATOR_LIMITS } from "../../../src/account/plans";
import { freshWebhookOwner, makeEndpoint } from "../../support/webhook-fixtures";
import { api, apiWith, errorBodyOf } from "../../support/request";
import { interceptD1 } from "../../support/faults";
import { storeTestKey, type TestKey } from "../../support/test-keys";
import { addOperator } from "../../support/operators";

/**
 * How operators sign in to the operator API (docs/operations.md#operators,
 * docs/operations.md#cloudflare-access): a named operator's token, or
 * Cloudflare Access's assertion where the environment names an Access
 * application; and that every audit row names who acted.
 */

let key: TestKey;
beforeEach(async () => {
  await env.DB.prepare("DELETE FROM operators").run();
  key = await storeTestKey({ plan: "free" });
});

const withToken = (token: string, path: string, method = "GET", body?: unknown) =>
  api(`/admin${path}`, {
    method,
    key: null,
    headers: { Authorization: `Bearer ${token}`, ...(body !== undefined && { "Content-Type": "application/json" }) },
    ...(body !== undefined && { body: JSON.stringify(body) }),
  });

describe("named operators", () => {
  it("act with a token of their own, and every audit row of their actions names them", async () => {
    const ana = await addOperator("ana@example.com");
    expect((await withToken(ana, `/keys/${key.record.id}/limits`, "POST", { perMinute: 5, perDay: 50 })).status).toBe(
      200,
    );
    expect((await withToken(ana, `/keys/${key.record.id}/unban`, "POST")).status).toBe(200);
    expect((await withToken(ana, `/keys/${key.record.id}/console-link`, "POST")).status).toBe(201);
    expect((await withToken(ana, `/keys/${key.record.id}/revoke`, "POST")).status).toBe(200);
    const keyRows = await env.DB.prepare("SELECT operation, actor FROM key_events WHERE key_id = ?1 ORDER BY id")
      .bind(key.record.id)
      .all();
    expect(keyRows.results).toEqual(
      ["update", "unban", "console_link", "revoke"].map((operation) => ({ operation, actor: "ana@example.com" })),
    );

    const owner = await freshWebhookOwner();
    const endpoint = await makeEndpoint(owner.key, { url: "https://receiver.example/hooks" });
    expect((await withToken(ana, `/webhook-endpoints/${endpoint.id}/disable`, "POST")).status).toBe(200);
    expect((await withToken(ana, `/webhook-endpoints/${endpoint.id}/enable`, "POST")).status).toBe(200);
    const endpointRows = await env.DB.prepare(
      "SELECT operation, actor FROM webhook_endpoint_events WHERE endpoint_id = ?1 AND operation <> " +
        "'create' ORDER BY " +
        "id",
    )
      .bind(endpoint.id)
      .all();
    expect(endpointRows.results).toEqual([
      { operation: "disable", actor: "ana@example.com" },
      { operation: "enable", actor: "ana@example.com" },
    ]);
  });

  it("are refused from the request after their revocation, each alone: the others and the bootstrap operator go on", async () => {
    const [ana, ben] = [await addOperator("ana"), await addOperator("ben")];
    const usage = `/keys/${key.record.id}/usage`;
    expect((await withToken(ana, usage)).status).toBe(200);
    await env.DB.prepare(REVOKE_OPERATOR).bind("ana", new Date().toISOString(), "cli:tests").run();
    const refused = await withToken(ana, usage);
    expect(await errorBodyOf(refused)).toMatchObject({ code: "invalid_api_key", status: 401 });
    expect(refused.headers.get("WWW-Authenticate")).toContain('error="invalid_token"');
    expect((await withToken(ben, usage)).status).toBe(200);
    expect((await withToken("operator-token-for-tests", usage)).status).toBe(200);
  });

  it("are looked up on the primary, and answered 503 while D1 cannot answer, never let in", async () => {
    const ana = await addOperator("ana");
    const sessions: string[] = [];
    vi.spyOn(console, "error").mockImplementation(() => {});
    const failing = interceptD1({
      onSession: (constraint) => void sessions.push(constraint),
      prepare: (statement, sql) =>
        sql.includes("FROM operators")
          ? ({
              bind: () => ({ first: () => Promise.reject(new Error("D1_ERROR: overloaded")) }),
            } as unknown as D1PreparedStatement)
          : statement,
    });
    const response = await apiWith({ ...env, DB: failing }, `/admin/keys/${key.record.id}/usage`, {
      key: null,
      headers: { Authorization: `Bearer ${ana}` },
    });
    expect(await errorBodyOf(response)).toMatchObject({ code: "service_unavailable", status: 503 });
    expect(sessions).toContain("first-primary");
  });

  it("cost no read of their table for a token found unknown within the minute, nor from a banned group, and act from a banned office once known", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.UTC(2030, 7, 1, 12, 0, 5));
      let reads = 0;
      const counting = interceptD1({
        prepare: (statement, sql) => (sql.includes("FROM operators") && reads++, statement),
      });
      const send = (token: string, address: string) =>
        apiWith({ ...env, DB: counting }, "/admin/pipeline", {
          key: null,
          headers: { Authorization: `Bearer ${token}`, "CF-Connecting-IP": address },
        });
      // An unknown token: read once before the limiter (and at the guard), then not before the limiter for a minute.
      const unknown = "so_op_unknownTokenOfNoOperatorAtAll0000000";
      expect(await errorBodyOf(await send(unknown, "198.51.100.20"))).toMatchObject({ status: 401 });
      const afterFirst = reads;
      expect(await errorBodyOf(await send(unknown, "198.51.100.20"))).toMatchObject({ status: 401 });
      expect(reads - afterFirst).toBe(1);
      // An address over its limit, not banned: made-up tokens are counted by it first, and cost no read.
      const limited = "198.51.100.23";
      for (let i = 0; i <= ANONYMOUS_LIMITS.perMinute; i++)
        await (await api("/v1/store/orders", { key: null, headers: { "CF-Connecting-IP": limited } })).arrayBuffer();
      const beforeLimited = reads;
      for (let i = 0; i < 3; i++)
        expect(await errorBodyOf(await send(`so_op_madeUpTokenNumber${i}OfNobody00000000000`, limited))).toMatchObject({
          code: "rate_limit_exceeded",
          status: 429,
        });
      expect(reads).toBe(beforeLimited);
      // An office address banned by its keyless callers.
      const office = "198.51.100.21";
      for (let i = 0; i < ANONYMOUS_LIMITS.perMinute + 25; i++)
        await (await api("/v1/store/orders", { key: null, headers: { "CF-Connecting-IP": office } })).arrayBuffer();
      const ana = await addOperator("ana-at-the-office");
      // From the banned group, a token not found live here within the minute is counted by address first: no read.
      const beforeBanned = reads;
      for (const token of [ana, "so_op_madeUpTokenOfNobodyAtAll0000000000000"])
        expect(await errorBodyOf(await send(token, office))).toMatchObject({ code: "api_key_banned", status: 429 });
      expect(reads).toBe(beforeBanned);
      // Once found live (from elsewhere), the operator acts from the banned office, counted on their own.
      expect((await send(ana, "198.51.100.22")).status).toBe(200);
      const acting = await send(ana, office);
      expect(acting.status).toBe(200);
      expect(acting.headers.get("X-RateLimit-Limit")).toBe(String(OPERATOR_LIMITS.perMinute));
    } finally {
      vi.useRealTimers();
    }
  });

  it("are never API keys, nor API keys operators: each is refused where the other is needed", async () => {
    const ana = await addOperator("ana");
    expect((await api("/v1/store/orders", { key: ana })).status).toBe(401);
    expect((await withToken(key.key, `/keys/${key.record.id}/usage`)).status).toBe(401);
  });

  it("need the operator API to exist: without the bootstrap secret a named token finds nothing (404)", async () => {
    const ana = await addOperator("ana");
    const { OPERATOR_TOKEN: _, ...withoutToken } = env;
    const response = await apiWith(withoutToken as Env, `/admin/keys/${key.record.id}/usage`, {
      key: null,
      headers: { Authorization: `Bearer ${ana}` },
    });
    expect(await errorBodyOf(response)).toMatchObject({ code: "not_found", status: 404 });
  });
});

/**
 * A team and an application standing in for Cloudflare Access, as the deploy
 * tests stand in for Cloudflare's API: its signing keys published at the
 * team's certs URL (the worker's fetch answered here), and assertions signed
 * as Access signs them.
 */
const TEAM = "store-ops.cloudflareaccess.com";
const AUDIENCE = "4714c1358e65fe4b408ad6d432a5f878f08194bdb4752441fd56faefa9b2b6f2";
const behindAccess = { ...env, ACCESS_TEAM_DOMAIN: TEAM, ACCESS_AUD: AUDIENCE } as Env;

let published: { privateKey: CryptoKey; kid: string };
let unpublished: { privateKey: CryptoKey; kid: string };
let jwks: unknown;
let certsFetched = 0;

beforeAll(async () => {
  const make = async (kid: string) => ({ ...(await generateKeyPair("RS256", { extractable: true })), kid });
  const [one, other] = [await make("access-key-1"), await make("access-key-2")];
  published = one;
  unpublished = other;
  jwks = { keys: [{ ...(await exportJWK(one.publicKey)), kid: one.kid, alg: "RS256", use: "sig" }] };
});

const realFetch = globalThis.fetch;
beforeEach(() => {
  vi.spyOn(globalThis, "fetch").mockImplementation(async (input, init) => {
    const url = input instanceof Request ? input.url : String(input);
    if (url === `https://${TEAM}/cdn-cgi/access/certs`) {
      certsFetched += 1;
      return Response.json(jwks);
    }
    // A team whose keys cannot be fetched: Access unreachable.
    if (url.includes("cloudflareaccess.com")) throw new TypeError("Network connection lost.");
    return realFetch(input, init);
  });
});
afterEach(() => vi.restoreAllMocks());

/**
 * An assertion as Access signs one: for this team and application, valid from when it is signed (`nbf`) for an hour,
 * unless the test says otherwise; `issuerAhead`, seconds the issuer's clock is ahead of the Worker's.
 */
async function assertion(
  claims: JWTPayload,
  options: {
    key?: typeof published;
    audience?: string;
    issuer?: string;
    expires?: number | string;
    issuerAhead?: number;
  } = {},
) {
  const key = options.key ?? published;
  const signedAt = Math.floor(Date.now() / 1000) + (options.issuerAhead ?? 0);
  return new SignJWT(claims)
    .setProtectedHeader({ alg: "RS256", kid: key.kid })
    .setIssuer(options.issuer ?? `https://${TEAM}`)
    .setAudience(options.audience ?? AUDIENCE)
    .setIssuedAt(signedAt)
    .setNotBefore(signedAt)
    .setExpirationTime(options.expires ?? signedAt + 3600)
    .sign(key.privateKey);
}

const throughAccess = (bindings: Env, path: string, headers: Record<string, string>, method = "GET") =>
  apiWith(bindings, `/admin${path}`, { method, key: null, headers });

const encode = (value: unknown) =>
  btoa(JSON.stringify(value)).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
const claimsOf = (claims: JWTPayload) => ({
  ...claims,
  iss: `https://${TEAM}`,
  aud: AUDIENCE,
  iat: Math.floor(Date.now() / 1000),
  exp: Math.floor(Date.now() / 1000) + 3600,
});

/** A token with `alg: none` and no signature, naming the published key. */
async function unsigned(claims: JWTPayload): Promise<string> {
  return `${encode({ alg: "none", kid: published.kid })}.${encode(claimsOf(claims))}.`;
}

/** A token RS256-signed by the team's key with this header, which jose's own signer would refuse to write. */
async function signedAsIs(header: object, claims: JWTPayload): Promise<string> {
  const input = `${encode(header)}.${encode(claimsOf(claims))}`;
  const signature = await crypto.subtle.sign(
    "RSASSA-PKCS1-v1_5",
    published.privateKey as unknown as globalThis.CryptoKey,
    new TextEncoder().encode(input),
  );
  const bytes = btoa(String.fromCharCode(...new Uint8Array(signature)));
  return `${input}.${bytes.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "")}`;
}

/**
 * A token HMAC-signed (HS256) with the bytes of the team's published public key as the secret: the algorithm-confusion
 * forgery.
 */
async function hmacWithPublicKey(claims: JWTPayload): Promise<string> {
  const publicKey = await crypto.subtle.importKey(
    "jwk",
    (jwks as { keys: JsonWebKey[] }).keys[0]!,
    { name: "RSASSA-PKCS1-v1_5", hash: "SHA-256" },
    true,
    ["verify"],
  );
  const spki = new Uint8Array((await crypto.subtle.exportKey("spki", publicKey)) as ArrayBuffer);
  const pem = `-----BEGIN PUBLIC KEY-----\n${btoa(String.fromCharCode(...spki))}\n-----END PUBLIC KEY-----\n`;
  return new SignJWT(claimsOf(claims))
    .setProtectedHeader({ alg: "HS256", kid: published.kid })
    .sign(new TextEncoder().encode(pem));
}

describe("the operators' side behind Cloudflare Access", () => {
  it("takes the person Access signed in as the operator: the audit names their email, and a service token by its client id", async () => {
    const ana = await assertion({ email: "ana@example.com" });
    expect(
      (await throughAccess(behindAccess, `/keys/${key.record.id}/usage`, { "Cf-Access-Jwt-Assertion": ana })).status,
    ).toBe(200);
    expect(
      (await throughAccess(behindAccess, `/keys/${key.record.id}/unban`, { "Cf-Access-Jwt-Assertion": ana }, "POST"))
        .status,
    ).toBe(200);
    const service = await assertion({ common_name: "8b1c0a4e.access" });
    expect(
      (
        await throughAccess(
          behindAccess,
          `/keys/${key.record.id}/unban`,
          { "Cf-Access-Jwt-Assertion": service },
          "POST",
        )
      ).status,
    ).toBe(200);
    const rows = await env.DB.prepare("SELECT operation, actor FROM key_events WHERE key_id = ?1 ORDER BY id")
      .bind(key.record.id)
      .all();
    expect(rows.results).toEqual([
      { operation: "unban", actor: "ana@example.com" },
      { operation: "unban", actor: "service:8b1c0a4e.access" },
    ]);
    // The team's keys were fetched once, then kept.
    expect(certsFetched).toBe(1);
  });

  it.each([
    ["a missing one", async () => undefined, "no Cf-Access-Jwt-Assertion header"],
    [
      "one for another application",
      () => assertion({ email: "ana@example.com" }, { audience: "0".repeat(64) }),
      "for another application",
    ],
    [
      "an expired one",
      () => assertion({ email: "ana@example.com" }, { expires: Math.floor(Date.now() / 1000) - 60 }),
      "has expired",
    ],
    [
      "one signed by a key the team does not publish",
      () => assertion({ email: "ana@example.com" }, { key: unpublished }),
      "signed by a key the team does not publish",
    ],
    [
      "one from another team",
      () => assertion({ email: "ana@example.com" }, { issuer: "https://other-team.cloudflareaccess.com" }),
      "issued by another team",
    ],
    ["one that names nobody", () => assertion({}), "names no email and no service token"],
    ["something that is not a token", async () => "not.a.token", "not a valid signed token"],
    // Access signs with RS256 only: an unsigned token, and one "signed" with HMAC keyed by the team's public key
    // (a verifier that takes the token's own alg would check it with that key and let it in), are refused.
    ["one with alg none", () => unsigned({ email: "ana@example.com" }), "not a valid signed token"],
    [
      "one HMAC-signed with the team's public key",
      () => hmacWithPublicKey({ email: "ana@example.com" }),
      "not a valid signed token",
    ],
    // A header jose does not support, signed by the team's key or not: the token's fault, never the keys' fetch.
    [
      "one with a critical header no verifier knows",
      () =>
        signedAsIs({ alg: "RS256", kid: published.kid, crit: ["x-store"], "x-store": 1 }, { email: "ana@example.com" }),
      "not a valid signed token",
    ],
    [
      "one naming a published key but signed by another",
      () => assertion({ email: "ana@example.com" }, { key: { ...unpublished, kid: published.kid } }),
      "signature does not verify",
    ],
  ])("refuses %s with 401 invalid_access_assertion, saying why", async (_, make, reason) => {
    const token = await make();
    const response = await throughAccess(
      behindAccess,
      `/keys/${key.record.id}/unban`,
      token === undefined ? {} : { "Cf-Access-Jwt-Assertion": token },
      "POST",
    );
    const body = await errorBodyOf(response);
    expect(body).toMatchObject({ code: "invalid_access_assertion", status: 401 });
    expect(body.message).toContain(reason);
    expect(response.headers.get("WWW-Authenticate")).toBe('CloudflareAccess realm="store-orders-operator"');
    const rows = await env.DB.prepare("SELECT count(*) AS n FROM key_events WHERE key_id = ?1")
      .bind(key.record.id)
      .first<number>("n");
    expect(rows).toBe(0);
  });

  it("takes an assertion signed by an issuer whose clock is a little ahead, and refuses one not valid for minutes", async () => {
    const usage = (token: string) =>
      throughAccess(behindAccess, `/keys/${key.record.id}/usage`, { "Cf-Access-Jwt-Assertion": token });
    const ahead = await assertion({ email: "ana@example.com" }, { issuerAhead: 2 });
    expect((await usage(ahead)).status).toBe(200);
    const future = await assertion({ email: "ana@example.com" }, { issuerAhead: 300 });
    expect(await errorBodyOf(await usage(future))).toMatchObject({ code: "invalid_access_assertion" });
  });

  it("takes an assertion whose aud is an array naming the application, as Access writes it", async () => {
    const token = await new SignJWT({ email: "ana@example.com" })
      .setProtectedHeader({ alg: "RS256", kid: published.kid })
      .setIssuer(`https://${TEAM}`)
      .setAudience([AUDIENCE])
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(published.privateKey);
    expect(
      (await throughAccess(behindAccess, `/keys/${key.record.id}/usage`, { "Cf-Access-Jwt-Assertion": token })).status,
    ).toBe(200);
    const others = await new SignJWT({ email: "ana@example.com" })
      .setProtectedHeader({ alg: "RS256", kid: published.kid })
      .setIssuer(`https://${TEAM}`)
      .setAudience(["0".repeat(64), "1".repeat(64)])
      .setIssuedAt()
      .setExpirationTime("1h")
      .sign(published.privateKey);
    expect(
      await errorBodyOf(
        await throughAccess(behindAccess, `/keys/${key.record.id}/usage`, { "Cf-Access-Jwt-Assertion": others }),
      ),
    ).toMatchObject({ code: "invalid_access_assertion" });
  });

  it("counts each operator behind Access on their own: two behind one office address send twice its minute's worth, never refused", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      // Mid-minute, so the minute cannot end among the requests.
      vi.setSystemTime(Date.UTC(2030, 6, 1, 9, 0, 15));
      const office = { "CF-Connecting-IP": "203.0.113.200" };
      const [ana, ben] = [await assertion({ email: "ana@example.com" }), await assertion({ email: "ben@example.com" })];
      const refused: string[] = [];
      for (let i = 0; i < ANONYMOUS_LIMITS.perMinute + 1; i++) {
        for (const [who, token] of [
          ["ana", ana],
          ["ben", ben],
        ] as const) {
          const response = await throughAccess(behindAccess, "/session", {
            "Cf-Access-Jwt-Assertion": token,
            ...office,
          });
          if (response.status !== 200) refused.push(`${who} #${i}: ${response.status}`);
          else expect(response.headers.get("X-RateLimit-Limit")).toBe(String(OPERATOR_LIMITS.perMinute));
        }
      }
      expect(refused).toEqual([]);
      // Each on a budget of their own: neither the address's nor the other's (a day of a 2 s poll is
      // test/node/logic/operator-budget.test.ts's).
      const usage = async (budget: string) => (await env.ACCOUNTS.getByName(budget).usage()).minute.count;
      expect(await usage("operator:ana@example.com")).toBeGreaterThanOrEqual(ANONYMOUS_LIMITS.perMinute + 1);
      expect(await usage("operator:ben@example.com")).toBeGreaterThanOrEqual(ANONYMOUS_LIMITS.perMinute + 1);
      expect(await usage("ip:203.0.113.200")).toBe(0);
    } finally {
      vi.useRealTimers();
    }
  });

  it("never answers an Access operator with a refusal of their office's address, even one repeated before identification", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    try {
      vi.setSystemTime(Date.UTC(2030, 6, 2, 9, 0, 15));
      const office = { "CF-Connecting-IP": "203.0.113.201" };
      // The office's keyless callers spend its minute: its refusal is kept, to be repeated to the address.
      for (let i = 0; i <= ANONYMOUS_LIMITS.perMinute; i++)
        await (await apiWith(env, "/v1/store/orders", { key: null, headers: office })).arrayBuffer();
      expect((await apiWith(env, "/v1/store/orders", { key: null, headers: office })).status).toBe(429);
      // The keys command with a service token sends no Authorization and no cookie: only Access's assertion.
      const cli = await assertion({ common_name: "8b1c0a4e.access" });
      expect(
        (await throughAccess(behindAccess, "/pipeline", { "Cf-Access-Jwt-Assertion": cli, ...office })).status,
      ).toBe(200);
    } finally {
      vi.useRealTimers();
    }
  });

  it("refuses a change another site's page sends with the operator's Access cookie riding along; the keys command, which sends no Origin, goes on", async () => {
    const ana = await assertion({ email: "ana@example.com" });
    const fromElsewhere = await throughAccess(
      behindAccess,
      `/keys/${key.record.id}/unban`,
      { "Cf-Access-Jwt-Assertion": ana, Origin: "https://evil.example" },
      "POST",
    );
    expect(await errorBodyOf(fromElsewhere)).toMatchObject({ code: "cross_site_request", status: 403 });
    const fetchSite = await throughAccess(
      behindAccess,
      `/keys/${key.record.id}/unban`,
      { "Cf-Access-Jwt-Assertion": ana, "Sec-Fetch-Site": "cross-site" },
      "POST",
    );
    expect(await errorBodyOf(fetchSite)).toMatchObject({ code: "cross_site_request" });
    expect(
      (await throughAccess(behindAccess, `/keys/${key.record.id}/unban`, { "Cf-Access-Jwt-Assertion": ana }, "POST"))
        .status,
    ).toBe(200);
    // Reads are not changes: a cross-site read is the browser's to withhold (no CORS for /admin).
    expect(
      (
        await throughAccess(behindAccess, `/keys/${key.record.id}/usage`, {
          "Cf-Access-Jwt-Assertion": ana,
          Origin: "https://evil.example",
        })
      ).status,
    ).toBe(200);
  });

  it("takes no operator token in Access's place, not even the bootstrap one", async () => {
    for (const token of ["operator-token-for-tests", "so_op_anything"]) {
      const response = await throughAccess(behindAccess, `/keys/${key.record.id}/usage`, {
        Authorization: `Bearer ${token}`,
      });
      expect(await errorBodyOf(response)).toMatchObject({ code: "invalid_access_assertion" });
    }
  });

  it("exists behind Access without an OPERATOR_TOKEN secret, and answers 503 while the team's keys cannot be fetched", async () => {
    const { OPERATOR_TOKEN: _, ...withoutToken } = behindAccess;
    const ana = await assertion({ email: "ana@example.com" });
    expect(
      (await throughAccess(withoutToken as Env, `/keys/${key.record.id}/usage`, { "Cf-Access-Jwt-Assertion": ana }))
        .status,
    ).toBe(200);
    vi.spyOn(console, "error").mockImplementation(() => {});
    const unreachable = { ...behindAccess, ACCESS_TEAM_DOMAIN: "unreachable.cloudflareaccess.com" } as Env;
    const response = await throughAccess(unreachable, `/keys/${key.record.id}/usage`, {
      "Cf-Access-Jwt-Assertion": ana,
    });
    expect(await errorBodyOf(response)).toMatchObject({ code: "service_unavailable", status: 503 });
  });

  it("needs its team and audience together, each of its form: the worker answers 503, its log line naming the var", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    for (const [vars, named] of [
      [{ ACCESS_TEAM_DOMAIN: TEAM }, "ACCESS_AUD and ACCESS_TEAM_DOMAIN go together"],
      [
        { ACCESS_TEAM_DOMAIN: "store-ops.example.com", ACCESS_AUD: AUDIENCE },
        "ACCESS_TEAM_DOMAIN must be your Access team's domain",
      ],
      [{ ACCESS_TEAM_DOMAIN: TEAM, ACCESS_AUD: "aud" }, "ACCESS_AUD must be the Access application's audience tag"],
    ] as const) {
      errors.mockClear();
      const response = await apiWith({ ...env, ...vars } as Env, "/v1/store/orders", {});
      expect(response.status).toBe(503);
      expect(errors.mock.calls.map(([line]) => String(line)).join("\n")).toContain(named);
    }
  });
});
