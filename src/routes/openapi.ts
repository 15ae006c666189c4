import { openApiDocument } from "../openapi";
import { defineOperation, type Operation } from "./operation";

/** `GET /v1/openapi.json`. Takes the registry lazily because the registry includes this operation. */
export function openApiDocumentOperation(operations: () => readonly Operation[]): Operation {
  // The document depends only on the registry and the vars: build it once per isolate and environment.
  let cached: { for: string; json: string } | undefined;
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
      const key = `${c.env.PRODUCTION_BASE_URL} ${c.env.STAGING_BASE_URL} ${c.env.BASE_URL}`;
      if (cached?.for !== key) cached = { for: key, json: JSON.stringify(openApiDocument(operations(), c.env)) };
      return c.body(cached.json, 200, { "Content-Type": "application/json" });
    },
  });
}
