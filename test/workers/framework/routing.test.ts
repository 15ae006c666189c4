import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { api, errorBodyOf } from "../../support/request";
import { EVERY_OUTCOME } from "../../support/routes";
import type { SmartRouter } from "hono/router/smart-router";
import { app } from "../../../src/app/worker";

/** Each version's documented operations, as GET / and its base address list them. */
const V1_OPERATIONS = ["listOrders", "cancelOrder", "getPetById", "getOpenApiDocument"];
const V2_OPERATIONS = [
  "listOrdersV2",
  "getOrderV2",
  "cancelOrderV2",
  "listOrderEvents",
  "createWebhookEndpoint",
  "listWebhookEndpoints",
  "getWebhookEndpoint",
  "updateWebhookEndpoint",
  "rotateWebhookSecret",
  "sendWebhookTestEvent",
  "deleteWebhookEndpoint",
  "listWebhookDeliveries",
  "retryWebhookDelivery",
  "recoverWebhookDeliveries",
  "getUsage",
  "listOwnKeys",
  "rotateOwnKey",
  "revokeOwnKey",
  "openConsoleSession",
  "redeemConsoleLink",
  "getConsoleSession",
  "endConsoleSession",
  "getOpenApiDocument",
];

describe("routing and the Error shape", () => {
  it("names the Worker version that answered on every kind of response, and at GET /", async () => {
    const { id, tag } = env.CF_VERSION_METADATA;
    expect(id).toMatch(/^[0-9a-f-]{36}$/);
    for (const [method, path] of [...EVERY_OUTCOME, ["OPTIONS", "/v1/store/orders"]] as [string, string][]) {
      const response = await api(path, {
        method,
        headers: method === "OPTIONS" ? { Origin: "https://shop.example", "Access-Control-Request-Method": "GET" } : {},
      });
      expect(response.headers.get("X-Worker-Version"), `${method} ${path}`).toBe(id);
    }
    const described = await (await api("/")).json<{ workerVersion: { id: string; tag: string | null } }>();
    expect(described.workerVersion).toEqual({ id, tag: tag || null });
  });

  it("describes the service at GET /", async () => {
    const response = await api("/");
    expect(response.status).toBe(200);
    const body = await response.json<{ name: string; operations: { operationId: string }[] }>();
    expect(body.name).toBe("Store Orders");
    // v1's documented operations, then v2's.
    expect(body.operations.map((operation) => operation.operationId)).toEqual([...V1_OPERATIONS, ...V2_OPERATIONS]);
  });

  it.each([
    ["/v1", "1.0.0", V1_OPERATIONS],
    ["/v2", "2.0.0", V2_OPERATIONS],
  ])(
    "describes the version at its base address, GET %s, as GET / lists it, without a key",
    async (prefix, version, operationIds) => {
      const response = await api(prefix, { key: null });
      expect(response.status).toBe(200);
      const body = await response.json<{
        name: string;
        version: string;
        baseUrl: string;
        operations: { operationId: string; path: string }[];
      }>();
      const service = await (await api("/")).json<{
        versions: { version: string }[];
        operations: { operationId: string; path: string }[];
      }>();
      expect(body).toMatchObject({
        name: "Store Orders",
        ...service.versions.find((entry) => entry.version === version),
      });
      expect(body.baseUrl).toBe(`http://localhost:8787${prefix}`);
      expect(body.operations.map((operation) => operation.operationId)).toEqual(operationIds);
      expect(body.operations).toEqual(
        service.operations.filter((operation) => operation.path.startsWith(`${prefix}/`)),
      );
      expect(response.headers.get("X-RateLimit-Limit")).not.toBeNull();
      const refused = await api(prefix, { method: "POST" });
      expect(refused.headers.get("Allow")).toBe("GET, HEAD, OPTIONS");
      // Its base URL asked for as a folder, as a client joining paths writes it: the same answer, and the same methods.
      const folder = await api(`${prefix}/`, { key: null });
      expect(folder.status).toBe(200);
      expect(await folder.json()).toEqual(body);
      expect((await api(`${prefix}/`, { method: "POST" })).headers.get("Allow")).toBe("GET, HEAD, OPTIONS");
      expect(
        (
          await api(`${prefix}/`, {
            method: "OPTIONS",
            key: null,
            headers: { Origin: "https://app.example", "Access-Control-Request-Method": "GET" },
          })
        ).status,
      ).toBe(204);
    },
  );

  it.each(["/nope", "/store/orders", "/v1/nope", "/v1/store/orders/1/items", "/v1x/store/orders"])(
    "answers 404 not_found for %s",
    async (path) => {
      expect(await errorBodyOf(await api(path))).toMatchObject({ code: "not_found", status: 404 });
    },
  );

  // /v2 exists now: /v3 is the next version that does not.
  it.each(["/v3/store/orders", "/v0", "/v12/pets/1"])("answers 404 unsupported_version for %s", async (path) => {
    expect(await errorBodyOf(await api(path))).toMatchObject({ code: "unsupported_version", status: 404 });
  });

  it.each([
    ["POST", "/v1/store/orders", "GET, HEAD, OPTIONS"],
    ["PUT", "/v1/store/orders", "GET, HEAD, OPTIONS"],
    ["GET", "/v1/store/orders/1", "DELETE, OPTIONS"],
    ["PATCH", "/v1/store/orders/1", "DELETE, OPTIONS"],
    ["DELETE", "/v1/pets/1", "GET, HEAD, OPTIONS"],
    ["POST", "/v1/openapi.json", "GET, HEAD, OPTIONS"],
  ])("answers 405 with Allow for %s %s", async (method, path, allow) => {
    const response = await api(path, { method });
    expect(response.headers.get("Allow")).toBe(allow);
    expect(await errorBodyOf(response)).toMatchObject({ code: "method_not_allowed", status: 405 });
  });

  it("answers an empty last segment as a missing id (400), with its route's 405 for other methods", async () => {
    expect(await errorBodyOf(await api("/v1/store/orders/", { method: "DELETE" }))).toMatchObject({
      code: "invalid_order_id",
      status: 400,
    });
    const other = await api("/v1/store/orders/", { method: "PATCH" });
    expect(other.headers.get("Allow")).toBe("DELETE, OPTIONS");
    expect(await errorBodyOf(other)).toMatchObject({ code: "method_not_allowed", status: 405 });
  });

  it("answers an empty segment within a path 404 not_found: no resource lives there", async () => {
    expect(await errorBodyOf(await api("/v2/webhook-endpoints//deliveries"))).toMatchObject({
      code: "not_found",
      status: 404,
    });
  });

  it("routes with Hono's RegExpRouter, one match for the whole table (a route it cannot take would fall back to the slower TrieRouter)", async () => {
    await api("/v1/store/orders");
    expect((app.router as SmartRouter<unknown>).activeRouter.name).toBe("RegExpRouter");
  });

  it("answers HEAD like GET without a body", async () => {
    const response = await api("/v1/store/orders", { method: "HEAD" });
    expect(response.status).toBe(200);
    expect(await response.text()).toBe("");
  });

  it("puts X-Request-Id on every response, from cf-ray when present", async () => {
    const ok = await api("/v1/store/orders");
    const missing = await api("/v1/nope");
    expect(ok.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(missing.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
    expect(ok.headers.get("X-Request-Id")).not.toBe(missing.headers.get("X-Request-Id"));

    const fromRay = await api("/v1/store/orders", { headers: { "cf-ray": "8f1e2d3c4b5a6978-AMS" } });
    expect(fromRay.headers.get("X-Request-Id")).toBe("8f1e2d3c4b5a6978-AMS");
  });

  it.each(["x".repeat(4000), 'abc", "level": "info', "8f1e2d3c4b5a6978-AMS; admin=1", "<script>"])(
    "does not echo a cf-ray that is not a ray id (%#)",
    async (ray) => {
      const response = await api("/v1/store/orders", { headers: { "cf-ray": ray } });
      expect(response.headers.get("X-Request-Id")).toMatch(/^[0-9a-f-]{36}$/);
    },
  );

  it("does not trust a client-chosen X-Request-Id", async () => {
    const response = await api("/v1/store/orders", { headers: { "X-Request-Id": "injected" } });
    expect(response.headers.get("X-Request-Id")).not.toBe("injected");
  });
});
