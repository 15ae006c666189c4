import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BLOB_COLUMNS, DOUBLE_COLUMNS, outcomeOf } from "../../src/middleware/request-analytics";
import { apiWith } from "../support/request";
import { failingD1 } from "../support/faults";
import { seedOrders } from "../support/seed";
import { storeTestKey } from "../support/test-keys";

/**
 * The request analytics point (docs/operations.md#request-analytics): every
 * kind of response writes exactly one, with the budget (never the key) as
 * its index. Locally the runtime drops these writes, so a recording stand-in
 * takes the binding's place.
 */
function recording() {
  const points: AnalyticsEngineDataPoint[] = [];
  const dataset: AnalyticsEngineDataset = { writeDataPoint: (point) => void points.push(point ?? {}) };
  const named = (): Record<string, unknown>[] =>
    points.map((point) => ({
      index: point.indexes?.[0],
      ...Object.fromEntries(BLOB_COLUMNS.map((name, i) => [name, point.blobs?.[i]])),
      ...Object.fromEntries(DOUBLE_COLUMNS.map((name, i) => [name, point.doubles?.[i]])),
    }));
  return { points, named, env: { ...env, REQUESTS: dataset } as Env };
}

describe("the request analytics point", () => {
  it("is written once for each kind of response, with its outcome, route, status class and plan, never the key", async () => {
    await seedOrders([{ id: 1 }, { id: 2, status: "shipped" }]);
    const key = await storeTestKey({ plan: "pro" });
    const tight = await storeTestKey({ plan: "free", limits: { perMinute: 1, perDay: 100 } });
    const cases: [string, (bindings: Env) => Promise<Response>, Record<string, unknown>][] = [
      ["list", (b) => apiWith(b, "/v1/store/orders", { key: key.key }), { route: "/v1/store/orders", method: "GET", statusClass: "2xx", outcome: "admitted", plan: "pro", status: 200 }],
      ["cancel", (b) => apiWith(b, "/v1/store/orders/1", { key: key.key, method: "DELETE" }), { route: "/v1/store/orders/{orderId}", statusClass: "2xx", status: 204 }],
      ["conflict", (b) => apiWith(b, "/v1/store/orders/2", { key: key.key, method: "DELETE" }), { statusClass: "4xx", outcome: "admitted", status: 409 }],
      ["no key", (b) => apiWith(b, "/v1/store/orders", { key: null, headers: { "CF-Connecting-IP": "198.51.100.7" } }), { index: "ip:198.51.100.7", outcome: "unauthenticated", plan: "none", status: 401 }],
      ["unknown path", (b) => apiWith(b, "/v1/nope", { key: key.key }), { route: "unmatched", status: 404 }],
      ["limited", async (b) => (await (await apiWith(b, "/v1/store/orders", { key: tight.key })).arrayBuffer(), apiWith(b, "/v1/store/orders", { key: tight.key })), { outcome: "limited", statusClass: "4xx", status: 429, plan: "free" }],
      ["failing D1", (b) => apiWith({ ...b, DB: failingD1().db }, "/v1/store/orders/1", { key: key.key, method: "DELETE" }), { outcome: "error", statusClass: "5xx", status: 503 }],
    ];
    for (const [name, send, expected] of cases) {
      const stand = recording();
      const response = await send(stand.env);
      const body = new Uint8Array(await response.arrayBuffer());
      const points = stand.named();
      const last = points.at(-1)!;
      // The limited case sends twice: one point per request.
      expect(points, name).toHaveLength(name === "limited" ? 2 : 1);
      expect(last, name).toMatchObject({ version: expect.any(String), method: expected.method ?? expect.any(String), colo: "local", ...expected });
      // A body streamed without a declared length (every JSON body here) is -1; no body is 0.
      expect(last.bytes, name).toBe(body.byteLength === 0 ? 0 : response.headers.get("Content-Length") === null ? -1 : body.byteLength);
      expect(last.durationMs, name).toEqual(expect.any(Number));
      expect(last.index, name).toBe(expected.index ?? (name === "limited" ? tight.record.id : key.record.id));
      expect(JSON.stringify(stand.points), name).not.toContain("so_test_");
    }
  });

  it("names the outcome: a 5xx is an error whatever the limiter said, then its refusals, then a 401", () => {
    expect([outcomeOf(503, "admitted"), outcomeOf(429, "banned"), outcomeOf(429, "limited"), outcomeOf(401, undefined), outcomeOf(401, "admitted"), outcomeOf(404, undefined)]).toEqual([
      "error",
      "banned",
      "limited",
      "unauthenticated",
      "unauthenticated",
      "admitted",
    ]);
  });
});
