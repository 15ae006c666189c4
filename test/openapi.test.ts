import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import app from "../src/index";
import { api } from "./request";

interface OperationObject {
  operationId: string;
  deprecated?: boolean;
  "x-stability": string;
  security: object[];
  responses: Record<string, { headers: Record<string, unknown> }>;
}
interface Document {
  openapi: string;
  info: { version: string };
  servers: { url: string }[];
  paths: Record<string, Record<string, OperationObject>>;
  components: { securitySchemes: Record<string, object>; schemas: Record<string, object> };
}

const fetchDocument = async () => (await (await api("/v1/openapi.json", { key: null })).json()) as Document;

/**
 * What the app serves under /v1, as OpenAPI path templates: its method-specific
 * routes (Hono lists one entry per handler in a chain), not the 405 fallbacks
 * or the middleware that runs for every method.
 */
function servedOperations(): string[] {
  const served = app.routes
    .filter((route) => route.method !== "ALL" && route.path.startsWith("/v1/"))
    .map((route) => `${route.method.toLowerCase()} ${route.path.slice(3).replace(/:(\w+)\{[^}]*\}/g, "{$1}")}`);
  return [...new Set(served)];
}

function documentedOperations(document: Document): string[] {
  return Object.entries(document.paths).flatMap(([path, methods]) => Object.keys(methods).map((method) => `${method} ${path}`));
}

describe("GET /v1/openapi.json", () => {
  it("is served without a key, as OpenAPI 3.1 with info version 1.0.0", async () => {
    const response = await api("/v1/openapi.json", { key: null });
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("application/json");
    expect(response.headers.get("X-RateLimit-Limit")).toBe("60");
    const document = (await response.json()) as Document;
    expect(document.openapi).toBe("3.1.0");
    expect(document.info.version).toBe("1.0.0");
  });

  it("lists production and staging from the vars", async () => {
    const document = await fetchDocument();
    expect(document.servers.map((server) => server.url)).toEqual([env.PRODUCTION_BASE_URL, env.STAGING_BASE_URL]);
    for (const server of document.servers) expect(server.url).toMatch(/\/v1$/);
  });

  it("documents every route the app serves, and the app serves every documented operation", async () => {
    const document = await fetchDocument();
    expect(documentedOperations(document).sort()).toEqual(servedOperations().sort());
    expect(servedOperations()).toHaveLength(4);

    for (const operation of documentedOperations(document)) {
      const [method, template] = operation.split(" ");
      const response = await api(`/v1${template.replace(/\{\w+\}/g, "404")}`, { method: method.toUpperCase() });
      const body = await response.text();
      // Answered by the operation itself: at worst its own "no such order/pet", never an unknown route.
      expect(body, operation).not.toMatch(/"code":"(not_found|method_not_allowed|unsupported_version)"/);
    }
  });

  it("names every operation, marks its stability, and marks pets deprecated", async () => {
    const document = await fetchDocument();
    const byId = Object.fromEntries(
      Object.values(document.paths).flatMap((methods) => Object.values(methods)).map((op) => [op.operationId, op]),
    );
    expect(Object.keys(byId).sort()).toEqual(["cancelOrder", "getOpenApiDocument", "getPetById", "listOrders"]);
    for (const operation of Object.values(byId)) expect(["stable", "beta", "experimental"]).toContain(operation["x-stability"]);
    expect(byId.getPetById.deprecated).toBe(true);
    expect(byId.listOrders.deprecated).toBeUndefined();
    expect(byId.getPetById.responses["200"].headers).toHaveProperty("Sunset");
  });

  it("declares bearer security, with the document itself public", async () => {
    const document = await fetchDocument();
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(document.paths["/openapi.json"].get.security).toEqual([]);
    expect(document.paths["/store/orders"].get.security).toEqual([{ bearerAuth: [] }]);
  });

  it("describes each operation's errors and the rate-limit headers on every response", async () => {
    const document = await fetchDocument();
    const cancel = document.paths["/store/orders/{orderId}"].delete;
    expect(Object.keys(cancel.responses).sort()).toEqual(["204", "400", "401", "404", "409", "429", "500", "503"]);
    for (const operation of Object.values(document.paths).flatMap((methods) => Object.values(methods))) {
      for (const [status, response] of Object.entries(operation.responses)) {
        expect(Object.keys(response.headers), `${operation.operationId} ${status}`).toEqual(
          expect.arrayContaining(["X-RateLimit-Limit", "X-RateLimit-Remaining", "X-RateLimit-Reset", "RateLimit", "RateLimit-Policy"]),
        );
        if (status === "429" || status === "503") expect(response.headers).toHaveProperty("Retry-After");
      }
    }
    expect(Object.keys(document.components.schemas).sort()).toEqual(["Error", "Order", "Pet"]);
  });
});
