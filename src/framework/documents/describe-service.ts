import type { Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../app-env";
import { SERVICE, versionBaseUrl, type ApiVersion } from "../service-identity";
import { defineOperation, type Operation } from "../operations/define-operation";
import type { RouteGroup } from "../operations/mount-routes";
import { jsonBody } from "../counted-body";

const ServiceDescription = z
  .object({
    name: z.string(),
    baseUrl: z.string(),
    versions: z.array(z.object({}).loose()),
    operations: z.array(z.object({}).loose()),
  })
  .describe("What this service is, its versions with their documents, and where its operations live");

const VersionDescription = z
  .object({
    name: z.string(),
    version: z.string(),
    baseUrl: z.string(),
    document: z.string(),
    reference: z.string(),
    operations: z.array(z.object({}).loose()),
  })
  .describe("One version of the API: its base URL, document, reference page and operations");

/** The Worker version answering: during a gradual deployment, which release this is. */
export function workerVersionOf(c: Context<AppEnv>) {
  const { id = null, tag = null } = c.env.CF_VERSION_METADATA ?? {};
  return { id: id || null, tag: tag || null };
}

/** A version as `GET /` lists it and `GET <version>` describes it, for the /v1 base URL `baseUrl`. */
function versionEntry(baseUrl: string, version: ApiVersion) {
  const base = versionBaseUrl(baseUrl, version);
  return { version: version.version, baseUrl: base, document: `${base}/openapi.json`, reference: `${base}/docs` };
}

/** The documented operations of a group, each with its full path. */
function operationEntries(base: string, operations: readonly Operation[]) {
  return operations
    .filter((operation) => operation.documented !== false)
    .map(({ operationId, method, path, stability }) => ({
      operationId,
      method: method.toUpperCase(),
      path: base + path,
      stability,
    }));
}

/** `GET /`: what this service is, each version with its document and reference page, and every documented operation. */
export function describeServiceOperation(versions: readonly RouteGroup[]): Operation {
  return defineOperation({
    operationId: "describeService",
    public: true,
    documented: false,
    method: "get",
    path: "/",
    summary: "What this service is",
    description:
      "The service's name and base URL, its versions with their documents, and every documented operation with its " +
      "path and stability.",
    tag: "Service",
    stability: "stable",
    responses: { 200: { description: "The service description", body: ServiceDescription } },
    errors: [],
    handle(c) {
      const { baseUrl } = c.get("config");
      return jsonBody(c, {
        ...SERVICE,
        baseUrl,
        workerVersion: workerVersionOf(c),
        versions: versions.flatMap(({ version }) => (version ? [versionEntry(baseUrl, version)] : [])),
        operations: versions.flatMap(({ base, operations }) => operationEntries(base, operations)),
      });
    },
  });
}

/**
 * `GET /v1`, `GET /v2`: the base address a client is configured with says what `GET /` says of it, with its operations.
 */
export function describeVersionOperation(version: ApiVersion, operations: readonly Operation[]): Operation {
  return defineOperation({
    operationId: "describeVersion",
    public: true,
    documented: false,
    method: "get",
    path: "",
    summary: `What version ${version.version} of this service offers`,
    description:
      "The version's base URL, document and reference page, and its documented operations with their paths and " +
      "stability.",
    tag: "Service",
    stability: "stable",
    responses: { 200: { description: "The version's description", body: VersionDescription } },
    errors: [],
    handle(c) {
      const { baseUrl } = c.get("config");
      return jsonBody(c, {
        ...SERVICE,
        ...versionEntry(baseUrl, version),
        workerVersion: workerVersionOf(c),
        operations: operationEntries(version.prefix, operations),
      });
    },
  });
}
