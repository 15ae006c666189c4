import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { IdempotentAnswers, KEEP_MS, MAX_KEPT, type KeptAnswer } from "../../../src/account/idempotent-answers";
import { at, onAFakeClock, setClock } from "../../support/limits-clock";
import { failingD1, interceptD1 } from "../../support/faults";
import { api, apiWith, errorBodyOf } from "../../support/request";
import { storeTestKey, type TestKey } from "../../support/test-keys";
import { withoutDispatcher } from "../../support/webhook-fixtures";
import type { Account } from "../../../src/account/account";

/**
 * Retrying a write safely (docs/api.md#retrying-safely): the Idempotency-Key, kept in the account's Durable Object,
 * replayed only to the key id that sent it.
 */
const ALL = ["orders:read", "orders:write", "webhooks:manage", "keys:manage"] as const;
const owner = () => storeTestKey({ scopes: [...ALL] });

const json = (body: unknown) => ({ "Content-Type": "application/json", body: JSON.stringify(body) });
function post(key: TestKey, path: string, idempotencyKey: string | undefined, body: unknown, bindings: Env = env) {
  const { body: text, ...contentType } = json(body);
  return apiWith(bindings, path, {
    method: "POST",
    key: key.key,
    headers: { ...contentType, ...(idempotencyKey !== undefined && { "Idempotency-Key": idempotencyKey }) },
    body: text,
  });
}
const rotate = (key: TestKey, idempotencyKey?: string, body: unknown = { graceSeconds: 60 }) =>
  post(key, `/v2/keys/${key.record.id}/rotate`, idempotencyKey, body);
const keysOf = async (key: TestKey) =>
  (await (await api("/v2/keys", { key: key.key })).json<{ data: { id: string }[] }>()).data.map(({ id }) => id);

describe("an Idempotency-Key", () => {
  it("makes a retry of a rotation get the first answer again, the new key included, and no second key", async () => {
    const key = await owner();
    const first = await rotate(key, "rotate-1");
    expect(first.status).toBe(201);
    expect(first.headers.get("Idempotent-Replayed")).toBeNull();
    // The client timed out and never read it; its retry gets the same answer.
    const retried = await rotate(key, "rotate-1");
    expect(retried.status).toBe(201);
    expect(retried.headers.get("Idempotent-Replayed")).toBe("true");
    expect(retried.headers.get("Content-Type")).toBe(first.headers.get("Content-Type"));
    expect(await retried.text()).toBe(await first.text());
    expect(await keysOf(key)).toHaveLength(2);
  });

  it("lets one of many concurrent retries rotate: the others wait (409, Retry-After) or get its answer", async () => {
    const key = await owner();
    const answers = await Promise.all(Array.from({ length: 6 }, () => rotate(key, "rotate-at-once")));
    const made = answers.filter((answer) => answer.status === 201);
    const waiting = answers.filter((answer) => answer.status === 409);
    expect(made.length + waiting.length).toBe(6);
    expect(made.filter((answer) => answer.headers.get("Idempotent-Replayed") === null)).toHaveLength(1);
    for (const answer of waiting) {
      expect((await errorBodyOf(answer)).code).toBe("idempotency_key_in_flight");
      expect(Number(answer.headers.get("Retry-After"))).toBeGreaterThan(0);
    }
    expect(await keysOf(key)).toHaveLength(2);
    expect((await rotate(key, "rotate-at-once")).headers.get("Idempotent-Replayed")).toBe("true");
  });

  it("is refused with another request (422), and another write needs a key of its own", async () => {
    const key = await owner();
    expect((await rotate(key, "same-key", { graceSeconds: 60 })).status).toBe(201);
    const other = await rotate(key, "same-key", { graceSeconds: 120 });
    expect(await errorBodyOf(other)).toMatchObject({ code: "idempotency_key_reused", status: 422 });
    expect(await keysOf(key)).toHaveLength(2);
  });

  it("names the path in the request it stands for: the same key and body on another endpoint is refused (422)", async () => {
    const key = await owner();
    const endpoints: { id: string }[] = [];
    for (const url of ["https://a.example/hooks", "https://b.example/hooks"]) {
      endpoints.push(await (await post(key, "/v2/webhook-endpoints", undefined, { url }, withoutDispatcher())).json());
    }
    const test = (id: string) => post(key, `/v2/webhook-endpoints/${id}/test`, "same-test", {}, withoutDispatcher());
    expect((await test(endpoints[0]!.id)).status).toBe(200);
    const other = await test(endpoints[1]!.id);
    expect(other.headers.get("Idempotent-Replayed")).toBeNull();
    expect(await errorBodyOf(other)).toMatchObject({ code: "idempotency_key_reused", status: 422 });
  });

  it("never turns a made write into a 5xx when its answer cannot be kept: the write's answer stands, logged", async () => {
    const key = await owner();
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: unknown) => void errors.push(String(line)));
    const keeping = { ...withoutDispatcher(), ACCOUNTS: limiterFailingToKeep() } as Env;
    const made = await post(key, "/v2/webhook-endpoints", "unkept", { url: "https://receiver.example/hooks" }, keeping);
    expect(made.status).toBe(201);
    expect(((await made.json()) as { id: string }).id).toMatch(/^we_/);
    expect(errors.some((line) => line.includes("an answer for an Idempotency-Key was not kept"))).toBe(true);
  });

  it("answers 409 with Retry-After while the first request runs, then the first answer", async () => {
    const key = await owner();
    let release!: () => void;
    const held = new Promise<void>((resolve) => (release = resolve));
    let reached!: () => void;
    const started = new Promise<void>((resolve) => (reached = resolve));
    const slowInsert = interceptD1({
      prepare: (statement, sql) =>
        sql.startsWith("INSERT INTO webhook_endpoints")
          ? holdRun(statement, async () => {
              reached();
              await held;
            })
          : statement,
    });
    const bindings = { ...withoutDispatcher(), DB: slowInsert } as Env;
    const endpoint = { url: "https://receiver.example/hooks" };
    const first = post(key, "/v2/webhook-endpoints", "make-endpoint", endpoint, bindings);
    await started;
    const meanwhile = await post(key, "/v2/webhook-endpoints", "make-endpoint", endpoint, withoutDispatcher());
    expect(await errorBodyOf(meanwhile)).toMatchObject({ code: "idempotency_key_in_flight", status: 409 });
    expect(Number(meanwhile.headers.get("Retry-After"))).toBeGreaterThan(0);
    release();
    const made = await first;
    expect(made.status).toBe(201);
    const again = await post(key, "/v2/webhook-endpoints", "make-endpoint", endpoint, withoutDispatcher());
    expect(again.status).toBe(201);
    expect(again.headers.get("Idempotent-Replayed")).toBe("true");
    expect(again.headers.get("Location")).toBe(made.headers.get("Location"));
    // The secret, shown once, is shown again to the retry that stands for that once.
    expect(await again.json()).toEqual(await made.json());
  });

  it("is the key id's own: another key of the account with the same Idempotency-Key runs its own request", async () => {
    const key = await owner();
    const sibling = await storeTestKey({ scopes: [...ALL], budget: key.record.id });
    const endpoint = { url: "https://receiver.example/hooks" };
    const mine = await post(key, "/v2/webhook-endpoints", "copied-curl-line", endpoint, withoutDispatcher());
    const theirs = await post(sibling, "/v2/webhook-endpoints", "copied-curl-line", endpoint, withoutDispatcher());
    expect([mine.status, theirs.status]).toEqual([201, 201]);
    expect(theirs.headers.get("Idempotent-Replayed")).toBeNull();
    expect(((await theirs.json()) as { id: string }).id).not.toBe(((await mine.json()) as { id: string }).id);
  });

  it("keeps no 5xx: the retry after an outage runs", async () => {
    const key = await owner();
    const endpoint = { url: "https://receiver.example/hooks" };
    const down = { ...withoutDispatcher(), DB: failingD1().db } as Env;
    expect((await post(key, "/v2/webhook-endpoints", "after-outage", endpoint, down)).status).toBe(503);
    const retried = await post(key, "/v2/webhook-endpoints", "after-outage", endpoint, withoutDispatcher());
    expect(retried.status).toBe(201);
    expect(retried.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it("is checked after the key: a revoked key's retry is refused, never given the kept answer", async () => {
    const key = await owner();
    const other = await storeTestKey({ scopes: [...ALL], budget: key.record.id });
    expect((await rotate(key, "before-revocation")).status).toBe(201);
    expect((await post(other, `/v2/keys/${key.record.id}/revoke`, undefined, {})).status).toBeLessThan(300);
    const refused = await rotate(key, "before-revocation");
    expect(refused.status).toBe(401);
  });

  it("keeps no refusal that depends on the state of things: after the endpoint is enabled, the retry runs", async () => {
    const key = await owner();
    const made = (await (
      await post(
        key,
        "/v2/webhook-endpoints",
        undefined,
        { url: "https://receiver.example/hooks" },
        withoutDispatcher(),
      )
    ).json()) as { id: string };
    const toggle = (status: string) =>
      apiWith(withoutDispatcher(), `/v2/webhook-endpoints/${made.id}`, {
        method: "PATCH",
        key: key.key,
        headers: { "Content-Type": "application/json" },
        body: JSON.stringify({ status }),
      });
    expect((await toggle("disabled")).status).toBe(200);
    const test = () => post(key, `/v2/webhook-endpoints/${made.id}/test`, "test-event", {}, withoutDispatcher());
    expect((await errorBodyOf(await test())).code).toBe("webhook_endpoint_disabled");
    expect((await toggle("enabled")).status).toBe(200);
    const retried = await test();
    expect(retried.status).toBe(200);
    expect(retried.headers.get("Idempotent-Replayed")).toBeNull();
  });

  it("is not honoured where no answer can be kept sealed (no WEBHOOK_SECRETS_KEY): the write runs, and it is logged", async () => {
    const key = await owner();
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: unknown) => void errors.push(String(line)));
    const unsealed = { ...env, WEBHOOK_SECRETS_KEY: undefined } as unknown as Env;
    const rotateWithout = () =>
      post(key, `/v2/keys/${key.record.id}/rotate`, "no-sealing", { graceSeconds: 60 }, unsealed);
    expect((await rotateWithout()).status).toBe(201);
    expect(errors.some((line) => line.includes("an Idempotency-Key was not honoured"))).toBe(true);
  });

  it("must be 1 to 255 printable characters (400 invalid_idempotency_key), and is not needed", async () => {
    const key = await owner();
    for (const bad of ["x".repeat(256), "tab\there"]) {
      expect(await errorBodyOf(await rotate(key, bad))).toMatchObject({ code: "invalid_idempotency_key" });
    }
    expect((await rotate(key, undefined)).status).toBe(201);
  });

  it("keeps the answer sealed in the account's object: the new key is not there as text", async () => {
    const key = await owner();
    const made = (await (await rotate(key, "sealed")).json()) as { key: string };
    const stored = await runInDurableObject(env.ACCOUNTS.getByName(key.record.id), (_, state) =>
      state.storage.sql.exec<{ answer: string }>("SELECT answer FROM idempotent_answers").toArray(),
    );
    expect(stored).toHaveLength(1);
    expect(stored[0]!.answer).not.toContain(made.key);
    expect(stored[0]!.answer).not.toContain(made.key.slice(8, 30));
  });
});

describe("an account's kept answers", () => {
  describe("on a fake clock", () => {
    onAFakeClock();
    const request = "POST /v2/keys/key_A/rotate\ndigest";
    const KEY_ID = "key_AAAAAAAAAAAAAAAA";
    const answer: KeptAnswer = { status: 201, headers: {}, sealedBody: "sealed" };
    const keepOne = (stub: DurableObjectStub<Account>) =>
      runInDurableObject(stub, (limiter) => {
        limiter.addKey({
          id: KEY_ID,
          start: "so_test_AAAA",
          plan: "free",
          name: "kept",
          createdAt: new Date().toISOString(),
          scopes: [],
        });
        limiter.acquire({
          id: "first-ask",
          keyId: KEY_ID,
          ban: { threshold: 100, seconds: 60 },
          want: 1,
          speculative: false,
        });
        const begun = limiter.beginIdempotent(KEY_ID, "kept", request);
        if (begun.kind !== "run") throw new Error(`expected to run, got ${begun.kind}`);
        limiter.finishIdempotent(KEY_ID, "kept", request, begun.startedAt, answer);
      });
    const retry = (stub: DurableObjectStub<Account>) =>
      runInDurableObject(stub, (limiter) => limiter.beginIdempotent(KEY_ID, "kept", request));

    it("outlive the account's windows: its alarm keeps them for their day, then lets them go", async () => {
      // Noon: the day's window ends at midnight, twelve hours before the answer's day does.
      setClock(0);
      const stub = env.ACCOUNTS.getByName("budget-kept-past-its-windows");
      await keepOne(stub);
      setClock(13 * 3600);
      expect(await runDurableObjectAlarm(stub)).toBe(true);
      expect(await retry(stub)).toEqual({ kind: "replay", answer });
      // The next wake is the answer's own end, not the usage history's (48 hours on).
      expect(await runInDurableObject(stub, (_, state) => state.storage.getAlarm())).toBe(at(0) + KEEP_MS);

      vi.setSystemTime(at(0) + KEEP_MS);
      expect(await runDurableObjectAlarm(stub)).toBe(true);
      const rows = await runInDurableObject(
        stub,
        (_, state) => state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM idempotent_answers").one().n,
      );
      expect(rows).toBe(0);
    });

    it("are not given to a key the object knows ended, while KV may still show it live", async () => {
      setClock(0);
      const stub = env.ACCOUNTS.getByName("budget-of-an-ended-key");
      await keepOne(stub);
      await runInDurableObject(stub, (limiter) => limiter.revokeKey(KEY_ID, "retired", new Date().toISOString()));
      expect(await retry(stub)).toEqual({ kind: "bypass" });
    });
  });

  it(`are at most ${MAX_KEPT.toLocaleString("en")}, the oldest dropped first, at a measured size each`, async () => {
    await runInDurableObject(env.ACCOUNTS.getByName("budget-of-many-writes"), (_, state) => {
      const answers = new IdempotentAnswers(state.storage.sql);
      // A rotation's answer as it is kept: about 300 bytes of JSON, sealed (base64, 4/3 the size), headers beside it.
      const answer = { status: 201, headers: { "Content-Type": "application/json" }, sealedBody: "s".repeat(420) };
      const start = Date.now();
      const before = state.storage.sql.databaseSize;
      for (let i = 0; i < MAX_KEPT + 25; i++) {
        const begun = answers.begin("key_A", `write-${i}`, `POST /v2/keys/key_A/rotate\ndigest-${i}`, start + i);
        if (begun.kind === "run")
          answers.finish("key_A", `write-${i}`, `POST /v2/keys/key_A/rotate\ndigest-${i}`, start + i, answer);
      }
      const rows = state.storage.sql.exec<{ n: number }>("SELECT count(*) AS n FROM idempotent_answers").one().n;
      expect(rows).toBe(MAX_KEPT);
      const oldest = state.storage.sql
        .exec<{ idempotency_key: string }>("SELECT idempotency_key FROM idempotent_answers ORDER BY started_at LIMIT 1")
        .one().idempotency_key;
      expect(oldest).toBe("write-25");
      // docs/design/rate-limits.md#idempotent-answers: under 1 KB a kept answer of this size, so 10 MB an account.
      const bytesPerRow = (state.storage.sql.databaseSize - before) / rows;
      expect(bytesPerRow).toBeLessThan(1_024);
    });
  });
});

/** A statement whose run (and first, all) waits for `hold` first; bound copies too. */
function holdRun(statement: D1PreparedStatement, hold: () => Promise<void>): D1PreparedStatement {
  return new Proxy(statement, {
    get(target, property) {
      if (property === "bind") return (...values: unknown[]) => holdRun(target.bind(...values), hold);
      if (property === "run" || property === "first" || property === "all")
        return async (...args: unknown[]) => {
          await hold();
          return (target[property] as (...a: unknown[]) => unknown).apply(target, args);
        };
      const value = target[property as keyof D1PreparedStatement];
      return typeof value === "function" ? value.bind(target) : value;
    },
  });
}

/** The accounts' objects, whose keeping of an answer (finishIdempotent) fails as an overloaded object's call would. */
function limiterFailingToKeep(): DurableObjectNamespace<Account> {
  return new Proxy(env.ACCOUNTS, {
    get(target, property) {
      if (property !== "getByName") {
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      }
      return (name: string) =>
        new Proxy(target.getByName(name), {
          get(stub, method) {
            if (method === "finishIdempotent") return () => Promise.reject(new Error("Durable Object is overloaded"));
            // A stub's methods are calls to the object: they need no receiver.
            return Reflect.get(stub, method);
          },
        });
    },
  });
}
