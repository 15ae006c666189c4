import type { Config } from "../config";
import { openApiDocument } from "../openapi";
import { defineOperation, type Operation } from "./operation";

/** `GET /v1/openapi.json`. Takes the registry lazily because the registry includes this operation. */
export function openApiDocumentOperation(operations: () => readonly Operation[]): Operation {
  // The document depends only on the registry and the vars: build it once per isolate and environment.
  let cached: { for: Config; json: string } | undefined;
  return defineOperation({
    operationId: "getOpenApiDocument",
    method: "get",
    path: "/openapi.json",
    summary: "This API's OpenAPI 3.1 document",
    stability: "beta",
    public: true,
    responses: { 200: { description: "The OpenAPI document" } },
    errors: [],
    handle(c) {
      const config = c.get("config");
      if (cached?.for !== config) cached = { for: config, json: JSON.stringify(openApiDocument(operations(), config)) };
      return c.body(cached.json, 200, { "Content-Type": "application/json" });
    },
  });
}
