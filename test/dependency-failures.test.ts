import { env } from "cloudflare:workers";
import { afterEach, describe, expect, it, vi } from "vitest";
import { Hono } from "hono";
import type { AppEnv } from "../src/env";
import { handleError } from "../src/middleware/errors";
import { requestId } from "../src/middleware/request-id";
import { requestLog } from "../src/middleware/request-log";
import { apiWith, errorBodyOf } from "./request";
import { storeTestKey } from "./keys";
import { failingD1 } from "./faults";
import { clearOrders, orderStatus, seedOrders } from "./seed";

afterEach(() => vi.restoreAllMocks());

describe("when D1 fails", () => {
  it.each([
    ["GET", "/v1/store/orders", {}],
    ["GET", "/v1/store/orders", { "If-None-Match": '"orders-x-1"' }],
    ["DELETE", "/v1/store/orders/1", {}],
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
  });

  it("recovers from a single transient failure without the client noticing", async () => {
    await clearOrders();
    await seedOrders([{ id: 1 }]);
    let failed = false;
    const flaky = new Proxy(env.DB, {
      get(target, property) {
        if (property === "batch") {
          return (statements: D1PreparedStatement[]) => {
            if (!failed) {
              failed = true;
              return Promise.reject(new Error("transient"));
            }
            return target.batch(statements);
          };
        }
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    const response = await apiWith({ ...env, DB: flaky }, "/v1/store/orders/1", { method: "DELETE" });
    expect(response.status).toBe(204);
    expect(await orderStatus(1)).toBe("cancelled");
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

describe("unexpected errors", () => {
  it("answer 500 internal_error without internals, and are logged on the request's line", async () => {
    const logged = vi.spyOn(console, "error").mockImplementation(() => {});
    const app = new Hono<AppEnv>().use(requestId(), requestLog());
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
