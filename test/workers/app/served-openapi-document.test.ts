import { REFERENCE_PATH } from "../../../src/framework/documents/reference-page";
import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { ERROR_STATUS } from "../../../src/framework/api-error";
import { readConfig } from "../../../src/framework/read-config";
import { openApiDocument } from "../../../src/framework/documents/openapi-document";
import { operations } from "../../../src/app/v1-operations";
import { api } from "../../support/request";
import { servedRoutes } from "../../support/routes";

interface OperationObject {
  operationId: string;
  description?: string;
  tags?: string[];
  parameters: { name: string; in: string; description?: string }[];
  deprecated?: boolean;
  "x-stability": string;
  security: object[];
  responses: Record<
    string,
    { description: string; headers: Record<string, unknown>; content?: Record<string, unknown> }
  >;
}
interface Document {
  openapi: string;
  info: { version: string; contact?: object; license?: object };
  tags: { name: string; description: string }[];
  servers: { url: string }[];
  paths: Record<string, Record<string, OperationObject>>;
  components: { securitySchemes: Record<string, object>; schemas: Record<string, object> };
}

const fetchDocument = async () => (await (await api("/v1/openapi.json", { key: null })).json()) as Document;

/** What the app serves under /v1, as "method /template" relative to the prefix. */
// The reference page is for people, not an operation: the document points to it as its externalDocs.
const servedOperations = () =>
  servedRoutes()
    .filter(({ path }) => path.startsWith("/v1/") && path !== REFERENCE_PATH)
    .map(({ method, path }) => `${method.toLowerCase()} ${path.slice(3)}`);

function documentedOperations(document: Document): string[] {
  return Object.entries(document.paths).flatMap(([path, methods]) =>
    Object.keys(methods).map((method) => `${method} ${path}`),
  );
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

  it("lists this deployment first, then production and staging, from the vars", async () => {
    const document = await fetchDocument();
    expect(document.servers.map((server) => server.url)).toEqual([
      env.BASE_URL,
      env.PRODUCTION_BASE_URL,
      env.STAGING_BASE_URL,
    ]);
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
      Object.values(document.paths)
        .flatMap((methods) => Object.values(methods))
        .map((op) => [op.operationId, op]),
    );
    expect(Object.keys(byId).sort()).toEqual(["cancelOrder", "getOpenApiDocument", "getPetById", "listOrders"]);
    for (const operation of Object.values(byId))
      expect(["stable", "beta", "experimental"]).toContain(operation["x-stability"]);
    expect(byId.getPetById.deprecated).toBe(true);
    expect(byId.listOrders.deprecated).toBeUndefined();
    expect(byId.getPetById.responses["200"].headers).toHaveProperty("Sunset");
  });

  it("declares bearer security, with the document itself public", async () => {
    const document = await fetchDocument();
    expect(document.components.securitySchemes.bearerAuth).toMatchObject({ type: "http", scheme: "bearer" });
    expect(document.paths["/openapi.json"].get.security).toEqual([]);
    expect(document.paths["/store/orders"].get.security).toEqual([{ bearerAuth: ["orders:read"] }]);
  });

  it("describes each operation's errors and the rate-limit headers on every response", async () => {
    const document = await fetchDocument();
    const cancel = document.paths["/store/orders/{orderId}"].delete;
    expect(Object.keys(cancel.responses).sort()).toEqual([
      "204",
      "400",
      "401",
      "403",
      "404",
      "405",
      "409",
      "429",
      "500",
      "503",
    ]);
    for (const operation of Object.values(document.paths).flatMap((methods) => Object.values(methods))) {
      for (const [status, response] of Object.entries(operation.responses)) {
        expect(Object.keys(response.headers), `${operation.operationId} ${status}`).toEqual(
          expect.arrayContaining([
            "X-RateLimit-Limit",
            "X-RateLimit-Remaining",
            "X-RateLimit-Reset",
            "RateLimit",
            "RateLimit-Policy",
          ]),
        );
        if (status === "429" || status === "503") expect(response.headers).toHaveProperty("Retry-After");
      }
    }
    expect(Object.keys(document.components.schemas).sort()).toEqual(["Error", "Order", "Pet"]);
  });

  it("is exactly the document the registry builds from this environment's vars (the one npm test lints)", async () => {
    const config = readConfig(env as unknown as Record<string, unknown>);
    if (!config.ok) throw new Error(config.problems.join("; "));
    expect(await fetchDocument()).toEqual(JSON.parse(JSON.stringify(openApiDocument(operations, config.config))));
  });

  it("describes wrong paths, wrong versions and missing methods on every operation, 405 with Allow", async () => {
    const document = await fetchDocument();
    for (const operation of Object.values(document.paths).flatMap((methods) => Object.values(methods))) {
      expect(operation.responses["404"]!.description).toMatch(/`not_found`.*`unsupported_version`/);
      expect(operation.responses["405"]!.description).toContain("`method_not_allowed`");
      expect(operation.responses["405"]!.headers).toHaveProperty("Allow");
    }
  });

  it("documents the document's own body, If-None-Match on listOrders, and 304 as Not Modified", async () => {
    const document = await fetchDocument();
    expect(document.paths["/openapi.json"].get.responses["200"]!.content).toHaveProperty("application/json");
    const list = document.paths["/store/orders"].get;
    expect(list.parameters.map((p) => `${p.in} ${p.name}`)).toContain("header If-None-Match");
    expect(list.responses["304"]!.description).toMatch(/^Not Modified/);
    expect(list.responses["304"]!.content).toBeUndefined();
  });

  it("warns in every int64 id's description that it exceeds 2^53 and must be parsed exactly", async () => {
    const document = (await fetchDocument()) as unknown as {
      components: { schemas: Record<string, { properties: Record<string, { description: string }> }> };
    };
    const { Order, Pet } = document.components.schemas;
    for (const field of [Order!.properties.id, Order!.properties.petId, Pet!.properties.id]) {
      expect(field!.description).toMatch(/2\^53.*exactly/);
    }
    const paths = (await fetchDocument()).paths;
    for (const parameter of [
      ...paths["/store/orders/{orderId}"].delete.parameters,
      ...paths["/pets/{petId}"].get.parameters,
    ]) {
      expect(parameter.description).toMatch(/2\^53.*exactly/);
    }
  });

  it("keeps v1's int64s JSON integers, as the specification says, and points each to v2's strings and the TypeScript client", async () => {
    const document = await fetchDocument();
    const { Order, Pet } = document.components.schemas as Record<
      string,
      { properties: Record<string, { type: string; format: string; description: string }> }
    >;
    const orderId = document.paths["/store/orders/{orderId}"].delete.parameters.find(
      (parameter) => parameter.name === "orderId",
    ) as unknown as { schema: object; description: string };
    for (const int64 of [
      Order!.properties.id!,
      Order!.properties.petId!,
      Pet!.properties.id!,
      { ...orderId.schema, description: orderId.description },
    ]) {
      expect(int64).toMatchObject({ type: "integer", format: "int64" });
      expect(int64.description).toMatch(/v2.*strings.*TypeScript client.*client\//);
    }
  });

  it("leaves Error.code open: the known codes are examples, in the Error schema and in each response, never an enum", async () => {
    const document = await fetchDocument();
    const { Error: errorSchema } = document.components.schemas as Record<
      string,
      { properties: Record<string, object> }
    >;
    expect(errorSchema!.properties.code).toMatchObject({ type: "string", examples: Object.keys(ERROR_STATUS) });
    expect(document.paths["/store/orders/{orderId}"].delete.responses["404"]!.content).toEqual({
      "application/json": {
        schema: {
          allOf: [
            { $ref: "#/components/schemas/Error" },
            { properties: { code: { examples: ["order_not_found", "not_found", "unsupported_version"] } } },
          ],
        },
      },
    });
    expect(JSON.stringify(document)).not.toMatch(/"code":\{[^{}]*"enum"/);
  });

  it("has contact, license, defined tags, and a description and a tag on every operation", async () => {
    const document = await fetchDocument();
    expect(document.info.contact).toBeDefined();
    expect(document.info.license).toBeDefined();
    const tags = document.tags.map((tag) => tag.name);
    for (const operation of Object.values(document.paths).flatMap((methods) => Object.values(methods))) {
      expect(operation.description, operation.operationId).toBeTruthy();
      expect(operation.tags, operation.operationId).toHaveLength(1);
      expect(tags).toContain(operation.tags![0]);
    }
  });

  it("declares the scope each operation needs, and 403 insufficient_scope where one is needed", async () => {
    const { paths } = await fetchDocument();
    expect(paths["/store/orders"].get.security).toEqual([{ bearerAuth: ["orders:read"] }]);
    expect(paths["/store/orders/{orderId}"].delete.security).toEqual([{ bearerAuth: ["orders:write"] }]);
    expect(paths["/pets/{petId}"].get.security).toEqual([{ bearerAuth: ["orders:read"] }]);
    expect(paths["/store/orders/{orderId}"].delete.responses["403"]!.headers).toHaveProperty("WWW-Authenticate");
    expect(paths["/openapi.json"].get.responses["403"]).toBeUndefined();
  });
});
