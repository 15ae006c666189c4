import { env } from "cloudflare:workers";
import { createExecutionContext, runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { refusalBatch } from "../../../src/account/lease-book";
import { LEASE_MS } from "../../../src/account/policy";
import { Account } from "../../../src/account/account";
import worker from "../../../src/app/worker";
import { storeTestKey } from "../../support/test-keys";
import { api, apiWith, clientRequest, errorBodyOf } from "../../support/request";
import { onAFakeClock, send, setClock, statuses } from "../../support/limits-clock";

/**
 * Callers without a valid key, the limiter object and its alarm, and leases: the limits kept across isolates
 * (docs/design/rate-limits.md#leases).
 */

onAFakeClock();

describe("callers without a valid key", () => {
  it("are limited per address at the free plan's limits, and still get their 401", async () => {
    setClock(0);
    const headers = { "CF-Connecting-IP": "203.0.113.7" };
    const responses: Response[] = [];
    for (let i = 0; i < 61; i++) responses.push(await api("/v1/store/orders", { key: null, headers }));
    expect(statuses(responses)).toEqual([...Array(60).fill(401), 429]);
    expect(responses[0].headers.get("X-RateLimit-Limit")).toBe("60");
    expect(responses[0].headers.get("X-RateLimit-Remaining")).toBe("59");
    expect((await errorBodyOf(responses[60])).code).toBe("rate_limit_exceeded");

    // Bad keys from that address share its budget; another address has its own.
    const badKey = await api("/v1/store/orders", { headers: { ...headers, Authorization: "Bearer nope" } });
    expect(badKey.status).toBe(429);
    const elsewhere = await api("/v1/store/orders", { key: null, headers: { "CF-Connecting-IP": "198.51.100.1" } });
    expect(elsewhere.status).toBe(401);
    expect(elsewhere.headers.get("X-RateLimit-Remaining")).toBe("59");
  });

  it("share one budget per IPv6 /64, however the addresses in it are written", async () => {
    setClock(0);
    const addresses = ["2001:db8:77::1", "2001:DB8:77:0::2", "2001:0db8:0077:0000:ffff::3"];
    const remaining: (string | null)[] = [];
    for (const address of addresses) {
      const response = await api("/v1/store/orders", { key: null, headers: { "CF-Connecting-IP": address } });
      remaining.push(response.headers.get("X-RateLimit-Remaining"));
    }
    expect(remaining).toEqual(["59", "58", "57"]);
    const nextNetwork = await api("/v1/store/orders", {
      key: null,
      headers: { "CF-Connecting-IP": "2001:db8:77:1::1" },
    });
    expect(nextNetwork.headers.get("X-RateLimit-Remaining")).toBe("59");
  });

  it("count an IPv4 caller by its address", async () => {
    setClock(0);
    const first = await api("/v1/store/orders", { key: null, headers: { "CF-Connecting-IP": "192.0.2.44" } });
    const mapped = await api("/v1/store/orders", { key: null, headers: { "CF-Connecting-IP": "::ffff:192.0.2.44" } });
    const neighbour = await api("/v1/store/orders", { key: null, headers: { "CF-Connecting-IP": "192.0.2.45" } });
    expect([first, mapped, neighbour].map((r) => r.headers.get("X-RateLimit-Remaining"))).toEqual(["59", "58", "59"]);
  });

  it("put rate-limit headers on every kind of response", async () => {
    const { key } = await storeTestKey();
    for (const [method, path, status] of [
      ["GET", "/", 200],
      ["GET", "/v1/store/orders", 200],
      ["DELETE", "/v1/store/orders/1", 404],
      ["DELETE", "/v1/store/orders/x", 400],
      ["POST", "/v1/store/orders", 405],
      ["GET", "/v3/store/orders", 404],
    ] as const) {
      const response = await api(path, { method, key });
      expect(response.status).toBe(status);
      expect(response.headers.get("X-RateLimit-Limit")).toBe("300");
      expect(response.headers.get("RateLimit")).toMatch(/^"minute";r=\d+;t=\d+, "day";r=\d+;t=\d+$/);
    }
  });
});

describe("the limiter object", () => {
  it("admits exactly the limit under 200 concurrent requests", async () => {
    const { key } = await storeTestKey({ plan: "pro", limits: { perMinute: 50, perDay: 1000 } });
    setClock(1);
    const responses = await Promise.all(Array.from({ length: 200 }, () => api("/v1/store/orders", { key })));
    const counts = statuses(responses).reduce<Record<number, number>>((acc, s) => {
      acc[s] = (acc[s] ?? 0) + 1;
      return acc;
    }, {});
    expect(counts).toEqual({ 200: 50, 429: 150 });
  });

  it("keeps counts and bans in storage, so a new instance (after eviction or a restart) carries on", async () => {
    const counted = await storeTestKey({ plan: "free", limits: { perMinute: 3, perDay: 10 } });
    const banned = await storeTestKey({ plan: "free", limits: { perMinute: 1, perDay: 10 } });
    setClock(0);
    await send(counted.key, 2);
    await send(banned.key, 22);
    const ban = { threshold: 20, seconds: 900 };

    const afterEviction = (name: string, limits: { perMinute: number; perDay: number }) =>
      runInDurableObject(env.ACCOUNTS.getByName(name), (_, state) =>
        new Account(state, env).acquire({ id: `after-${name}`, limits, ban, want: 1, speculative: false }),
      );
    expect(await afterEviction(counted.record.id, counted.record.limits!)).toMatchObject({
      outcome: "admitted",
      minute: { remaining: 0 },
    });
    expect(await afterEviction(banned.record.id, banned.record.limits!)).toMatchObject({ outcome: "banned" });
  });

  it("forgets a caller with an alarm once the day is over", async () => {
    const { key, record } = await storeTestKey({ plan: "free" });
    setClock(0);
    await send(key, 1);
    const stub = env.ACCOUNTS.getByName(record.id);
    const scheduled = await runInDurableObject(stub, (_, state) => state.storage.getAlarm());
    expect(scheduled).toBe(Date.UTC(2030, 2, 11));

    vi.setSystemTime(Date.UTC(2030, 2, 11));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await runInDurableObject(stub, (_, state) => state.storage.kv.get("state"))).toBeUndefined();
  });

  it("fails closed with 503 service_unavailable when it cannot answer after one retry", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    let calls = 0;
    const unreachable = {
      getByName: () => ({
        acquire: () => {
          calls += 1;
          return Promise.reject(new Error("Durable Object reset because its code was updated."));
        },
      }),
    } as unknown as Env["ACCOUNTS"];
    const response = await apiWith({ ...env, ACCOUNTS: unreachable }, "/v1/store/orders");
    expect(await errorBodyOf(response)).toMatchObject({ code: "service_unavailable", status: 503 });
    expect(response.headers.get("Retry-After")).toBe("1");
    expect(calls).toBe(2);
  });
});

describe("leases", () => {
  /** The real limiter binding, counting the lease requests made through it. */
  function countingLimiter(): { binding: Env["ACCOUNTS"]; acquires: () => number } {
    let acquires = 0;
    const binding = {
      getByName: (name: string) => {
        const stub = env.ACCOUNTS.getByName(name);
        return {
          acquire: (...args: Parameters<Account["acquire"]>) => {
            acquires += 1;
            return stub.acquire(...args);
          },
          settle: (...args: Parameters<Account["settle"]>) => stub.settle(...args),
        };
      },
    } as unknown as Env["ACCOUNTS"];
    return { binding, acquires: () => acquires };
  }

  const counted = (name: string) =>
    runInDurableObject(env.ACCOUNTS.getByName(name), (_, state) =>
      state.storage.kv.get<{ minuteCount: number; dayCount: number }>("state"),
    );

  it("lets concurrent requests in one isolate share one lease request instead of each calling the object", async () => {
    const { key } = await storeTestKey({ plan: "enterprise", limits: { perMinute: 10_000, perDay: 100_000 } });
    setClock(1);
    const limiter = countingLimiter();
    const responses = await Promise.all(
      Array.from({ length: 40 }, () => apiWith({ ...env, ACCOUNTS: limiter.binding }, "/v1/store/orders", { key })),
    );
    expect(statuses(responses)).toEqual(Array(40).fill(200));
    expect(limiter.acquires()).toBeLessThanOrEqual(3);
  });

  it("answers a caller it knows is refused without calling the object, and sends the refusals in a batch", async () => {
    const { key, record } = await storeTestKey({ plan: "free", limits: { perMinute: 1, perDay: 1000 } });
    setClock(2);
    const limiter = countingLimiter();
    const send = () => apiWith({ ...env, ACCOUNTS: limiter.binding }, "/v1/store/orders", { key });
    expect((await send()).status).toBe(200);
    for (let i = 0; i < 15; i++) expect((await send()).status).toBe(429);
    // One call admitted the first request, one refused the second; the rest were answered here.
    expect(limiter.acquires()).toBe(2);
    const state = await runInDurableObject(env.ACCOUNTS.getByName(record.id), (_, s) =>
      s.storage.kv.get<{ refusedInARow: number }>("state"),
    );
    // The object's own refusal is counted once its client has the 429: it travels with the isolate's refusals, in
    // batches.
    expect(state!.refusedInARow).toBeGreaterThanOrEqual(
      refusalBatch({ threshold: Number(env.BAN_THRESHOLD), seconds: Number(env.BAN_SECONDS) }),
    );
  });

  /**
   * The real limiter, deciding every call, whose answers never come back (as when it answers after the isolate's
   * timeout).
   */
  function losingAnswers(): Env["ACCOUNTS"] {
    return {
      getByName: (name: string) => {
        const stub = env.ACCOUNTS.getByName(name);
        return {
          acquire: async (...args: Parameters<Account["acquire"]>) => {
            await stub.acquire(...args);
            throw new Error("no answer within 1000 ms");
          },
          settle: (...args: Parameters<Account["settle"]>) => stub.settle(...args),
        };
      },
    } as unknown as Env["ACCOUNTS"];
  }

  it("counts a retried lease request once and takes back a lost one's grant, so lost answers do not drain the minute", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const { key, record } = await storeTestKey({ plan: "free", limits: { perMinute: 20, perDay: 1000 } });
    setClock(1);
    const losing = losingAnswers();
    for (let i = 0; i < 30; i++)
      expect((await apiWith({ ...env, ACCOUNTS: losing }, "/v1/store/orders", { key })).status).toBe(503);
    expect((await counted(record.id))!.minuteCount).toBeLessThanOrEqual(1);
    const [next] = await send(key, 1);
    expect(next.status).toBe(200);
    expect(next.headers.get("X-RateLimit-Remaining")).toBe("19");
  });

  it("never counts a refusal whose answer was lost (the client saw 503) toward a ban", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const { key, record } = await storeTestKey({ plan: "free", limits: { perMinute: 1, perDay: 1000 } });
    setClock(1);
    expect(statuses(await send(key, 1))).toEqual([200]);
    const losing = losingAnswers();
    for (let i = 0; i < 30; i++)
      expect((await apiWith({ ...env, ACCOUNTS: losing }, "/v1/store/orders", { key })).status).toBe(503);
    const state = await runInDurableObject(env.ACCOUNTS.getByName(record.id), (_, s) =>
      s.storage.kv.get<{ refusedInARow: number; bannedUntil: number }>("state"),
    );
    expect(state).toMatchObject({ refusedInARow: 0, bannedUntil: 0 });
    expect(await errorBodyOf((await send(key, 1))[0]!)).toMatchObject({ code: "rate_limit_exceeded" });
  });

  it("hands back what an expired lease left unspent, so the admissions are not lost to the window", async () => {
    // The lease's own timer hands it back: its timers and the clock are the test's, so nothing waits for the wall
    // clock.
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] });
    const { key, record } = await storeTestKey({ plan: "enterprise", limits: { perMinute: 1_000, perDay: 10_000 } });
    setClock(1);
    // A steady caller, one request every 50 ms: its isolate expects more and leases ahead of them.
    for (let i = 0; i < 8; i++) {
      expect(
        (await worker.fetch(clientRequest("/v1/store/orders", { key }), env, createExecutionContext())).status,
      ).toBe(200);
      await vi.advanceTimersByTimeAsync(50);
    }
    // vi.waitFor polls on the real timers: the renewal is the object's call, in the background.
    await vi.waitFor(async () => expect((await counted(record.id))!.dayCount).toBeGreaterThan(8), {
      timeout: 10_000,
      interval: 20,
    });
    await vi.advanceTimersByTimeAsync(LEASE_MS);
    await vi.waitFor(async () => expect((await counted(record.id))!.dayCount).toBe(8), {
      timeout: 10_000,
      interval: 20,
    });
  }, 30_000);
});
