import { z } from "zod";
import { openApiDocument, type WebhookDescription } from "./openapi-document";
import type { ApiVersion } from "../service-identity";
import { defineOperation, type Operation } from "../operations/define-operation";
import { textBody } from "../counted-body";

const OpenApiDocumentBody = z
  .object({ openapi: z.string().describe("The OpenAPI version, 3.1.0") })
  .loose()
  .describe("An OpenAPI 3.1 document");

/** `GET <version>/openapi.json`: the document, built once per parsed config. */
export function openApiDocumentOperation(
  operations: readonly Operation[],
  version: ApiVersion,
  documents: WeakMap<object, string>,
  webhooks: readonly WebhookDescription[] = [],
): Operation {
  const self: Operation = defineOperation({
    operationId: "getOpenApiDocument",
    method: "get",
    path: "/openapi.json",
    summary: "This API's OpenAPI 3.1 document",
    description:
      "This document, for tools and generated clients. It needs no API key; like every call without one, it is " +
      "rate limited per address.",
    tag: "Service",
    stability: "beta",
    public: true,
    responses: { 200: { description: "The OpenAPI document", body: OpenApiDocumentBody } },
    errors: [],
    handle(c) {
      const config = c.get("config");
      let json = documents.get(config);
      if (json === undefined) {
        json = JSON.stringify(openApiDocument([...operations, self], config, version, webhooks));
        documents.set(config, json);
      }
      return textBody(c, json, 200, { "Content-Type": "application/json" });
    },
  });
  return self;
}
