import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Hono } from "hono";
import type { AppEnv } from "../../../src/framework/app-env";
import { handleError } from "../../../src/framework/middleware/error-handler";
import { responseIdentity } from "../../../src/framework/middleware/response-identity";
import { requestLog } from "../../../src/framework/middleware/request-log";
import { requestParty } from "../../../src/keys/request-party";
import { LIMITER_TIMEOUT_MS } from "../../../src/account/lease-client";
import type { Account } from "../../../src/account/account";
import { api, apiWith, errorBodyOf } from "../../support/request";
import { storeTestKey } from "../../support/test-keys";
import { failingD1, failingReads, withBatch } from "../../support/faults";
import { clearOrders, orderStatus, ordersVersion, seedManyOrders, seedOrders } from "../../support/seed";

afterEach(() => vi.restoreAllMocks());

describe("when D1 fails", () => {
  it.each([
    ["GET", "/v1/store/orders", {}],
    ["GET", "/v1/store/orders", { "If-None-Match": '"orders-x-1"' }],
    ["DELETE", "/v1/store/orders/1", {}],
    ["GET", "/v2/store/order-events", {}],
  ])("%s %s answers 503 service_unavailable with Retry-After after one retry", async (method, path, headers) => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const d1 = failingD1();
    const response = await apiWith({ ...env, DB: d1.db }, path, { method, headers });
    expect(response.status).toBe(503);
    expect(response.headers.get("Retry-After")).toBe("1");
    const body = await errorBodyOf(response);
    expect(body.code).toBe("service_unavailable");
    expect(body.message).not.toMatch(/D1_ERROR|SELECT/);
    expect(d1.calls()).toBe(2);

    expect((await api(path, { method, headers })).status).toBeLessThan(500);
  });

  it("leaves the order untouched when a cancel cannot reach D1", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    await clearOrders();
    await seedOrders([{ id: 1 }]);
    const version = await ordersVersion();
    const response = await apiWith({ ...env, DB: failingD1().db }, "/v1/store/orders/1", { method: "DELETE" });
    expect(response.status).toBe(503);
    expect(await orderStatus(1)).toBe("pending");
    expect(await ordersVersion()).toBe(version);
  });

  it("changes an order once when a cancel committed but its answer was lost, and is retried", async () => {
    await clearOrders();
    await seedOrders([{ id: 1 }]);
    const version = await ordersVersion();
    let lost = false;
    const lossy = withBatch((batch, statements) => {
      if (lost) return batch(statements);
      lost = true;
      return batch(statements).then(() => Promise.reject(new Error("Network connection lost.")));
    });
    const response = await apiWith({ ...env, DB: lossy }, "/v1/store/orders/1", { method: "DELETE" });
    expect(response.status).toBe(204);
    expect(await orderStatus(1)).toBe("cancelled");
    expect(await ordersVersion()).toBe(version + 1);
  });

  it("recovers from a single transient failure without the client noticing", async () => {
    await clearOrders();
    await seedOrders([{ id: 1 }]);
    let failed = false;
    const flaky = withBatch((batch, statements) => {
      if (failed) return batch(statements);
      failed = true;
      return Promise.reject(new Error("transient"));
    });
    const response = await apiWith({ ...env, DB: flaky }, "/v1/store/orders/1", { method: "DELETE" });
    expect(response.status).toBe(204);
    expect(await orderStatus(1)).toBe("cancelled");
  });
});

describe("when D1 fails in the middle of a list", () => {
  it("cuts the 200 response off, so no client parses a short list, and logs it with the request id", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    await clearOrders();
    await seedManyOrders(1_500);
    const response = await apiWith({ ...env, DB: failingReads() }, "/v1/store/orders");
    expect(response.status).toBe(200);
    await expect(response.text()).rejects.toThrow();
    const lines = logged.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);
    expect(lines).toContainEqual(
      expect.objectContaining({
        level: "error",
        requestId: response.headers.get("X-Request-Id"),
        message: "order list stream aborted",
      }),
    );
    await clearOrders();
  });
});

describe("when KV fails", () => {
  it("a key that is not cached answers 503 service_unavailable after one retry", async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const { key } = await storeTestKey();
    let reads = 0;
    const failingKv = {
      get: () => {
        reads += 1;
        return Promise.reject(new Error("KV GET failed: 500 Internal Server Error"));
      },
    } as unknown as KVNamespace;
    const response = await apiWith({ ...env, API_KEYS: failingKv }, "/v1/store/orders", { key });
    expect(response.status).toBe(503);
    expect(response.headers.get("Retry-After")).toBe("1");
    expect((await errorBodyOf(response)).code).toBe("service_unavailable");
    expect(reads).toBe(2);

    expect((await apiWith(env, "/v1/store/orders", { key })).status).toBe(200);
  });
});

describe("when the limiter is slow", () => {
  /** A limiter binding whose first `stuck` lease requests never answer; later ones ask the real limiter. */
  function stuckLimiter(stuck: number): { binding: Env["ACCOUNTS"]; calls: () => number } {
    let calls = 0;
    const binding = {
      getByName: (name: string) => ({
        acquire: (...args: Parameters<Account["acquire"]>) => {
          calls += 1;
          return calls <= stuck ? new Promise(() => {}) : env.ACCOUNTS.getByName(name).acquire(...args);
        },
      }),
    } as unknown as Env["ACCOUNTS"];
    return { binding, calls: () => calls };
  }

  it(`answers 503 with Retry-After when it does not answer within ${LIMITER_TIMEOUT_MS} ms, twice`, async () => {
    vi.spyOn(console, "error").mockImplementation(() => {});
    const limiter = stuckLimiter(2);
    // Each wait is on a fake clock, moved on once the request is waiting for that ask: no test waits for the real one.
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const answering = apiWith({ ...env, ACCOUNTS: limiter.binding }, "/v1/store/orders");
    for (const ask of [1, 2]) {
      await expect.poll(limiter.calls).toBe(ask);
      await vi.advanceTimersByTimeAsync(LIMITER_TIMEOUT_MS);
    }
    const response = await answering;
    vi.useRealTimers();
    expect(await errorBodyOf(response)).toMatchObject({ code: "service_unavailable", status: 503 });
    expect(response.headers.get("Retry-After")).toBe("1");
    expect(limiter.calls()).toBe(2);

    expect((await apiWith({ ...env, ACCOUNTS: limiter.binding }, "/v1/store/orders")).status).toBe(200);
  });

  it("serves the request when only the first attempt was stuck", async () => {
    // The object answers the second attempt within its time on a busy machine too: it is started first, as a live one
    // is.
    expect((await api("/v1/store/orders")).status).toBe(200);
    const limiter = stuckLimiter(1);
    vi.useFakeTimers({ toFake: ["setTimeout", "clearTimeout"] });
    const answering = apiWith({ ...env, ACCOUNTS: limiter.binding }, "/v1/store/orders");
    await expect.poll(limiter.calls).toBe(1);
    await vi.advanceTimersByTimeAsync(LIMITER_TIMEOUT_MS);
    const response = await answering;
    vi.useRealTimers();
    expect(response.status).toBe(200);
    expect(response.headers.get("X-RateLimit-Limit")).not.toBeNull();
  });
});

describe("unexpected errors", () => {
  it("answer 500 internal_error without internals, and are logged on the request's line", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const app = new Hono<AppEnv>().use(responseIdentity(), requestLog(requestParty));
    app.get("/boom", () => {
      throw new TypeError("Cannot read properties of undefined (reading 'secret')");
    });
    app.onError(handleError);

    const response = await app.request("/boom");
    const body = await errorBodyOf(response);
    expect(body.code).toBe("internal_error");
    expect(body.message).not.toMatch(/TypeError|secret/);
    const line = JSON.parse(String(logged.mock.calls.at(-1)?.[0]));
    expect(line.requestId).toBe(response.headers.get("X-Request-Id"));
    expect(line).toMatchObject({ level: "error", status: 500, error: expect.stringMatching(/TypeError/) });
    expect(logged).toHaveBeenCalledTimes(1);
  });
});
