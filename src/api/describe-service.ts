import { z } from "zod";
import { SERVICE, versionBaseUrl } from "../service-identity";
import { defineOperation, type Operation } from "./define-operation";
import type { RouteGroup } from "./mount-routes";
import { jsonBody } from "../counted-body";

const ServiceDescription = z
  .object({ name: z.string(), baseUrl: z.string(), versions: z.array(z.object({}).loose()), operations: z.array(z.object({}).loose()) })
  .describe("What this service is, its versions with their documents, and where its operations live");

/** `GET /`: what this service is, each version with its document and reference page, and every documented operation. */
export function describeServiceOperation(versions: readonly RouteGroup[]): Operation {
  return defineOperation({
    operationId: "describeService",
    public: true,
    documented: false,
    method: "get",
    path: "/",
    summary: "What this service is",
    description: "The service's name and base URL, its versions with their documents, and every documented operation with its path and stability.",
    tag: "Service",
    stability: "stable",
    responses: { 200: { description: "The service description", body: ServiceDescription } },
    errors: [],
    handle(c) {
      const { baseUrl } = c.get("config");
      const { id = null, tag = null } = c.env.CF_VERSION_METADATA ?? {};
      return jsonBody(c, {
        ...SERVICE,
        baseUrl,
        // The Worker version answering: during a gradual deployment, which release this is.
        workerVersion: { id: id || null, tag: tag || null },
        versions: versions.flatMap(({ version }) => {
          if (!version) return [];
          const base = versionBaseUrl(baseUrl, version);
          return [{ version: version.version, baseUrl: base, document: `${base}/openapi.json`, reference: `${base}/docs` }];
        }),
        operations: versions.flatMap(({ base, operations }) =>
          operations
            .filter((operation) => operation.documented !== false)
            .map(({ operationId, method, path, stability }) => ({ operationId, method: method.toUpperCase(), path: base + path, stability })),
        ),
      });
    },
  });
}
