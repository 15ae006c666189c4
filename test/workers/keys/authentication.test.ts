import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { PLANS } from "../../../src/account/plans";
import { storeTestKey } from "../../support/test-keys";
import { countingKv } from "../../support/faults";
import { keyChecksum } from "../../../src/keys/key-format";
import { generateApiKey } from "../../../src/keys/issue-key";
import { pointerName } from "../../../src/keys/kv-layout";
import { sha256Hex } from "../../../src/lib/digest";
import { forgetIsolateMemory } from "../../../src/app/isolate-memory";
import { EVERY_OUTCOME } from "../../support/routes";
import { api, apiWith, errorBodyOf } from "../../support/request";

const CHALLENGE = 'Bearer realm="store-orders"';
const listWith = (authorization: string | null) =>
  api("/v1/store/orders", authorization === null ? { key: null } : { headers: { Authorization: authorization } });

afterEach(() => vi.restoreAllMocks());

describe("bearer authentication", () => {
  it.each([
    ["no header", null],
    ["another scheme", "Basic dXNlcjpwYXNz"],
    ["a token without a scheme", "so_test_0123456789abcdefghijABCDEFGHIJKL"],
    ["the scheme with no token", "Bearer"],
  ])("answers 401 missing_api_key for %s, with a bare challenge", async (_, authorization) => {
    const response = await listWith(authorization);
    expect(await errorBodyOf(response)).toMatchObject({ code: "missing_api_key", status: 401 });
    expect(response.headers.get("WWW-Authenticate")).toBe(CHALLENGE);
  });

  it.each([
    ["a malformed token", "Bearer not-a-key"],
    ["a wrong prefix", "Bearer sk_live_0123456789abcdefghijABCDEFGHIJKL"],
    ["a token one character short", "Bearer so_test_0123456789abcdefghijABCDEFGHIJK"],
    ["a token with characters outside base62", "Bearer so_test_0123456789abcdefghijABCDEFGHIJK+"],
    ["a 10 KB token", `Bearer so_test_${"a".repeat(10_240)}`],
    [
      "two keys in one header",
      "Bearer so_test_0123456789abcdefghijABCDEFGHIJKL, Bearer so_test_0123456789abcdefghijABCDEFGHIJKL",
    ],
    ["an unknown key", "Bearer so_test_0123456789abcdefghijABCDEFGHIJKL"],
  ])("answers 401 invalid_api_key for %s, with error=invalid_token", async (_, authorization) => {
    const response = await listWith(authorization);
    expect(await errorBodyOf(response)).toMatchObject({ code: "invalid_api_key", status: 401 });
    expect(response.headers.get("WWW-Authenticate")).toBe(`${CHALLENGE}, error="invalid_token"`);
  });

  it("refuses a key of the current length whose checksum fails without reading KV, and reads KV for one whose checksum holds", async () => {
    const { key } = await storeTestKey();
    const mistyped = key.slice(0, 20) + (key[20] === "x" ? "y" : "x") + key.slice(21);
    const counting = countingKv();
    const bindings = { ...env, API_KEYS: counting.kv };
    const refused = await apiWith(bindings, "/v1/store/orders", { key: mistyped });
    expect(await errorBodyOf(refused)).toMatchObject({ code: "invalid_api_key", status: 401 });
    expect(counting.operations()).toBe(0);
    const unknown = `so_test_${"Q".repeat(32)}`;
    const wellFormed = unknown + keyChecksum(unknown);
    expect(await errorBodyOf(await apiWith(bindings, "/v1/store/orders", { key: wellFormed }))).toMatchObject({
      code: "invalid_api_key",
    });
    expect(counting.operations()).toBe(1);
  });

  it("answers 401 invalid_api_key for a revoked key", async () => {
    const { key } = await storeTestKey({ revokedAt: "2026-11-01T00:00:00Z" });
    const response = await listWith(`Bearer ${key}`);
    expect(await errorBodyOf(response)).toMatchObject({ code: "invalid_api_key", status: 401 });
  });

  it("answers 401 invalid_api_key for an expired key, saying that it expired", async () => {
    const { key } = await storeTestKey({ expiresAt: "2026-01-01T00:00:00.000Z" });
    const response = await listWith(`Bearer ${key}`);
    const body = await errorBodyOf(response);
    expect(body).toMatchObject({ code: "invalid_api_key", status: 401 });
    expect(body.message).toBe("The API key expired at 2026-01-01T00:00:00.000Z. Ask for a new one.");
    expect(response.headers.get("WWW-Authenticate")).toBe(`${CHALLENGE}, error="invalid_token"`);
  });

  it("accepts a key until the moment it expires", async () => {
    const { key } = await storeTestKey({ expiresAt: new Date(Date.now() + 60_000).toISOString() });
    expect((await listWith(`Bearer ${key}`)).status).toBe(200);
  });

  it.each(PLANS)("accepts a valid %s key", async (plan) => {
    const { key } = await storeTestKey({
      plan,
      ...(plan === "enterprise" && { limits: { perMinute: 5000, perDay: 50000 } }),
    });
    expect((await listWith(`Bearer ${key}`)).status).toBe(200);
    expect((await api("/v1/store/orders/1", { method: "DELETE", key })).status).toBe(404);
  });

  it("accepts the scheme in any case", async () => {
    const { key } = await storeTestKey();
    expect((await listWith(`bearer ${key}`)).status).toBe(200);
    expect((await listWith(`BEARER ${key}`)).status).toBe(200);
  });

  it("reads KV once per key while the key is cached, not on every request", async () => {
    const { key } = await storeTestKey();
    let reads = 0;
    const countingKv = new Proxy(env.API_KEYS, {
      get(target, property) {
        const value = Reflect.get(target, property);
        if (property !== "get") return typeof value === "function" ? value.bind(target) : value;
        return (...args: unknown[]) => {
          reads += 1;
          return (value as (...a: unknown[]) => unknown).apply(target, args);
        };
      },
    });
    for (let i = 0; i < 5; i++) {
      expect((await apiWith({ ...env, API_KEYS: countingKv }, "/v1/store/orders", { key })).status).toBe(200);
    }
    expect(reads).toBe(1);
  });

  it("never puts a key in a response (the request log's tests keep it out of logs)", async () => {
    vi.spyOn(console, "log").mockImplementation(() => {});
    const valid = await storeTestKey();
    const revoked = await storeTestKey({ revokedAt: "2026-11-01T00:00:00Z" });
    const unknown = "so_test_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ";
    for (const key of [valid.key, revoked.key, unknown]) {
      for (const [method, path] of EVERY_OUTCOME) {
        const response = await api(path, { method, key });
        const text = `${[...response.headers].join("\n")}\n${await response.text()}`;
        expect(text).not.toContain(key);
        expect(text).not.toContain(key.slice(8));
      }
    }
  });
});

describe("scopes", () => {
  it("refuses a cancel by a read-only key with 403 insufficient_scope and the RFC 6750 challenge", async () => {
    const { key } = await storeTestKey({ scopes: ["orders:read"] });
    expect((await listWith(`Bearer ${key}`)).status).toBe(200);
    const response = await api("/v1/store/orders/1", { method: "DELETE", key });
    expect(await errorBodyOf(response)).toMatchObject({ code: "insufficient_scope", status: 403 });
    expect(response.headers.get("WWW-Authenticate")).toBe(
      `${CHALLENGE}, error="insufficient_scope", scope="orders:write"`,
    );
    expect(response.headers.get("X-RateLimit-Limit")).not.toBeNull();
  });

  it("refuses the list to a write-only key, naming orders:read", async () => {
    const { key } = await storeTestKey({ scopes: ["orders:write"] });
    const response = await listWith(`Bearer ${key}`);
    expect(response.status).toBe(403);
    expect(response.headers.get("WWW-Authenticate")).toBe(
      `${CHALLENGE}, error="insufficient_scope", scope="orders:read"`,
    );
    expect((await api("/v1/store/orders/1", { method: "DELETE", key })).status).toBe(404);
  });
});

describe("rotated keys", () => {
  it("count a rotated key and the key it replaced against one account, and refuse the old one once its grace is over", async () => {
    const old = await storeTestKey({ plan: "free", expiresAt: new Date(Date.now() + 3_600_000).toISOString() });
    const rotated = await storeTestKey({ plan: "free", budget: old.record.id });
    const remaining = async (key: string) => (await listWith(`Bearer ${key}`)).headers.get("X-RateLimit-Remaining");
    expect([await remaining(old.key), await remaining(rotated.key), await remaining(old.key)]).toEqual([
      "59",
      "58",
      "57",
    ]);

    const graceOver = await storeTestKey({ plan: "free", expiresAt: new Date(Date.now() - 1_000).toISOString() });
    const sharing = await storeTestKey({ plan: "free", budget: graceOver.record.id });
    expect((await listWith(`Bearer ${graceOver.key}`)).status).toBe(401);
    expect((await listWith(`Bearer ${sharing.key}`)).status).toBe(200);
  });

  it("answer both keys of a pair with their account's one plan, and a change to it at once", async () => {
    const old = await storeTestKey({ plan: "business" });
    const rotated = await storeTestKey({ plan: "free", budget: old.record.id });
    const policies = async () => {
      const seen: (string | null)[] = [];
      for (const key of [rotated.key, old.key])
        seen.push((await listWith(`Bearer ${key}`)).headers.get("RateLimit-Policy"));
      return seen;
    };
    expect(await policies()).toEqual(Array(2).fill('"minute";q=1000;w=60, "day";q=100000;w=86400'));
    await env.ACCOUNTS.getByName(old.record.id).updateKey(rotated.record.id, { plan: { plan: "free" } });
    forgetIsolateMemory();
    expect(await policies()).toEqual(Array(2).fill('"minute";q=60;w=60, "day";q=1000;w=86400'));
  });
});

describe("key pointers", () => {
  it("refuse a key whose pointer in KV does not fit the schema, and log it as an error", async () => {
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: unknown) => void errors.push(String(line)));
    vi.spyOn(console, "log").mockImplementation(() => {});
    const key = generateApiKey("so_test_");
    await env.API_KEYS.put(pointerName(await sha256Hex(key)), JSON.stringify({ keyId: "not a key id", account: "x" }));
    const response = await listWith(`Bearer ${key}`);
    expect(await errorBodyOf(response)).toMatchObject({ code: "invalid_api_key", status: 401 });
    const logged = errors.map((line) => JSON.parse(line) as { level: string; message: string; problems?: string });
    expect(logged).toContainEqual(
      expect.objectContaining({ level: "error", problems: expect.stringContaining("keyId") }),
    );
    expect(errors.join("\n")).not.toContain(key);
  });
});
