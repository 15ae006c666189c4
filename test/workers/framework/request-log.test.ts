import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { RequestLogLine } from "../../../src/framework/middleware/request-log";
import { failingD1 } from "../../support/faults";
import { storeTestKey, type TestKey } from "../../support/test-keys";
import { inOneInstant } from "../../support/limits-clock";
import { EVERY_OUTCOME } from "../../support/routes";
import { api, apiWith } from "../../support/request";
import { clearOrders, seedOrders } from "../../support/seed";

/** Every line the worker writes to the console while `send` runs, parsed. */
async function logLinesOf(
  send: () => Promise<Response>,
): Promise<{ response: Response; lines: RequestLogLine[]; raw: string }> {
  const written: string[] = [];
  for (const level of ["log", "info", "warn", "error"] as const) {
    vi.spyOn(console, level).mockImplementation((...args: unknown[]) => void written.push(args.map(String).join(" ")));
  }
  const response = await send();
  await response.arrayBuffer();
  vi.restoreAllMocks();
  return { response, lines: written.map((line) => JSON.parse(line) as RequestLogLine), raw: written.join("\n") };
}

let key: TestKey;

beforeEach(async () => {
  await clearOrders();
  await seedOrders([{ id: 1 }, { id: 2, status: "shipped" }]);
  key = await storeTestKey({ plan: "free" });
});

afterEach(() => vi.restoreAllMocks());

describe("the request log", () => {
  it("writes one JSON line for a successful request, with who, what and the limiter's decision", async () => {
    const { response, lines } = await logLinesOf(() => api("/v1/store/orders", { key: key.key }));
    expect(lines).toEqual([
      {
        level: "info",
        requestId: response.headers.get("X-Request-Id"),
        method: "GET",
        route: "/v1/store/orders",
        status: 200,
        durationMs: expect.any(Number),
        keyId: key.record.id,
        plan: "free",
        versionId: env.CF_VERSION_METADATA.id,
        limit: "admitted",
      },
    ]);
  });

  it("names every route the worker serves, the service description, the reference page and the operator API included", async () => {
    const operator = { key: null, headers: { Authorization: "Bearer operator-token-for-tests" } };
    const cases = [
      { path: "/", init: {}, route: "/" },
      { path: "/v1/docs", init: {}, route: "/v1/docs" },
      { path: `/admin/keys/${key.record.id}/usage`, init: operator, route: "/admin/keys/{keyId}/usage" },
      {
        path: `/admin/keys/${key.record.id}/unban`,
        init: { ...operator, method: "GET" },
        route: "/admin/keys/{keyId}/unban",
      },
    ];
    for (const { path, init, route } of cases) {
      const { lines } = await logLinesOf(() => api(path, init));
      expect(lines).toEqual([expect.objectContaining({ route })]);
    }
  });

  it("names the route by its template, not by the id in the path", async () => {
    const { lines } = await logLinesOf(() => api("/v1/store/orders/2", { method: "DELETE", key: key.key }));
    expect(lines).toEqual([
      expect.objectContaining({ method: "DELETE", route: "/v1/store/orders/{orderId}", status: 409 }),
    ]);
  });

  it("logs refusals: no key, wrong method, unknown path", async () => {
    const cases = [
      { path: "/v1/store/orders", init: { key: null }, route: "/v1/store/orders", status: 401 },
      { path: "/v1/store/orders", init: { method: "PUT" }, route: "/v1/store/orders", status: 405 },
      { path: "/v1/nothing/here", init: {}, route: null, status: 404 },
    ];
    for (const { path, init, route, status } of cases) {
      const { lines } = await logLinesOf(() => api(path, init));
      expect(lines).toHaveLength(1);
      expect(lines[0]).toMatchObject({ level: "info", route, status });
    }
  });

  it("records a limited request as limited", async () => {
    const tight = await storeTestKey({ limits: { perMinute: 1, perDay: 100 } });
    // Both in one fixed instant: a minute turning between them would admit the second.
    const { lines } = await inOneInstant(async () => {
      await api("/v1/store/orders", { key: tight.key });
      return logLinesOf(() => api("/v1/store/orders", { key: tight.key }));
    });
    expect(lines).toEqual([
      expect.objectContaining({ status: 429, keyId: tight.record.id, plan: "pro", limit: "limited" }),
    ]);
  });

  it("writes a 5xx as one error line with the internal cause the client is not shown", async () => {
    const broken = { ...env, DB: failingD1().db };
    const { response, lines } = await logLinesOf(() => apiWith(broken, "/v1/store/orders", { key: key.key }));
    expect(response.status).toBe(503);
    expect(lines).toEqual([
      expect.objectContaining({
        level: "error",
        status: 503,
        limit: "admitted",
        error: expect.stringContaining("Network connection lost"),
      }),
    ]);
  });

  it("never writes the key, whatever the outcome", async () => {
    const revoked = await storeTestKey({ revokedAt: "2026-01-01T00:00:00Z" });
    const unknown = "so_test_ZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZZ";
    for (const sent of [key.key, revoked.key, unknown, `${key.key}x`]) {
      for (const [method, path] of EVERY_OUTCOME) {
        const { raw } = await logLinesOf(() => api(path, { method, key: sent }));
        expect(raw).not.toContain(sent);
        expect(raw).not.toContain(sent.slice(8));
        expect(raw).not.toMatch(/so_test_/);
      }
    }
  });
});
