import { z } from "zod";
import { SERVICE } from "../service-identity";
import { defineOperation, type Operation } from "./define-operation";
import type { RouteGroup } from "./mount-routes";

const ServiceDescription = z
  .object({ name: z.string(), version: z.string(), baseUrl: z.string(), operations: z.array(z.object({}).loose()) })
  .describe("What this service is and where its operations live");

/** `GET /`: what this service is and where the documented operations of `versions` live. */
export function describeServiceOperation(versions: readonly RouteGroup[]): Operation {
  return defineOperation({
    operationId: "describeService",
    public: true,
    documented: false,
    method: "get",
    path: "/",
    summary: "What this service is",
    description: "The service's name, version and base URL, and every documented operation with its path and stability.",
    tag: "Service",
    stability: "stable",
    responses: { 200: { description: "The service description", body: ServiceDescription } },
    errors: [],
    handle(c) {
      return c.json({
        ...SERVICE,
        baseUrl: c.get("config").baseUrl,
        operations: versions.flatMap(({ base, operations }) =>
          operations
            .filter((operation) => operation.documented !== false)
            .map(({ operationId, method, path, stability }) => ({ operationId, method: method.toUpperCase(), path: base + path, stability })),
        ),
      });
    },
  });
}
