/** The OpenAPI 3.1 document, from the operation registry and the zod schemas the routes validate with. */
import { z } from "zod";
import type { Config } from "../read-config";
import { ERROR_STATUS, ERROR_STATUS_HEADERS, ErrorBody, type ErrorCode } from "../api-error";
import { ALWAYS_SENT, HEADERS, type HeaderName } from "../header-catalogue";
import { API_VERSIONS, SERVICE, VERSION_PREFIX, versionBaseUrl, type ApiVersion } from "../service-identity";
import { scopesOf, TAGS, type Operation } from "../operations/define-operation";
import { ANY_KEY } from "../operations/scopes";

type JsonObject = Record<string, unknown>;

const GUARDED_ERRORS: ErrorCode[] = ["missing_api_key", "invalid_api_key", "insufficient_scope"];
/** What any path under /v1 may answer: a wrong path or version, a method the path lacks, limits, outages. */
const COMMON_ERRORS: ErrorCode[] = [
  "not_found",
  "unsupported_version",
  "method_not_allowed",
  "rate_limit_exceeded",
  "api_key_banned",
  "internal_error",
  "service_unavailable",
];

/** zod emits JSON Schema's safe-integer bounds for ints, but int64 values go beyond them. */
const jsonSchemaOptions = {
  target: "draft-2020-12",
  unrepresentable: "any",
  override: ({ jsonSchema }: { jsonSchema: JsonObject }) => {
    if (jsonSchema.format === "int64") {
      delete jsonSchema.minimum;
      delete jsonSchema.maximum;
    }
    // `format: date-time` says it all; zod's long calendar regex only obscures the document.
    if (jsonSchema.format === "date-time") delete jsonSchema.pattern;
  },
} as const;

/** A header as the document describes it: the catalogue's description and schema. */
const headerObject = (name: HeaderName) => ({ description: HEADERS[name].description, schema: HEADERS[name].schema });

/** What a document's components hold: exactly the headers and named schemas its operations refer to. */
interface Components {
  headers: Set<HeaderName>;
  schemas: Record<string, JsonObject>;
}

/** A schema's JSON, its named schemas added to the components: one version's "Order" is not another's. */
function schemaOf(schema: z.core.$ZodType, components: Components): JsonObject {
  const { $schema: _, ...json } = z.toJSONSchema(schema, jsonSchemaOptions) as JsonObject;
  // Named schemas live in components; point at them instead of inlining copies.
  const text = JSON.stringify(json).replaceAll('"#/$defs/', '"#/components/schemas/');
  const { $defs = {}, ...rest } = JSON.parse(text) as { $defs?: Record<string, JsonObject> };
  for (const [id, named] of Object.entries($defs)) {
    const known = components.schemas[id];
    if (known !== undefined && JSON.stringify(known) !== JSON.stringify(named))
      throw new Error(`two schemas named ${id} in one document`);
    components.schemas[id] = named;
  }
  return rest;
}

/** References to response headers, noting each in the components. */
function headerRefs(names: readonly HeaderName[], components: Components): JsonObject {
  for (const name of names) components.headers.add(name);
  return Object.fromEntries(names.map((name) => [name, { $ref: `#/components/headers/${name}` }]));
}

function responsesOf(operation: Operation, components: Components): JsonObject {
  const extra: HeaderName[] = operation.deprecation ? ["Deprecation", "Sunset", "Link"] : [];
  const responses: JsonObject = {};
  for (const [status, response] of Object.entries(operation.responses)) {
    responses[status] = {
      description: response.description,
      headers: headerRefs([...ALWAYS_SENT, ...(response.headers ?? [])], components),
      ...(response.body && { content: { "application/json": { schema: schemaOf(response.body, components) } } }),
    };
  }

  const guarded = operation.public
    ? []
    : operation.scope === ANY_KEY
      ? GUARDED_ERRORS.filter((code) => code !== "insufficient_scope")
      : GUARDED_ERRORS;
  const codes = [...operation.errors, ...guarded, ...COMMON_ERRORS];
  for (const status of [...new Set(codes.map((code) => ERROR_STATUS[code]))].sort()) {
    const codesHere = codes.filter((code) => ERROR_STATUS[code] === status);
    const headers: HeaderName[] = [...ALWAYS_SENT, ...(ERROR_STATUS_HEADERS[status] ?? [])];
    // The deprecation headers go on what the operation itself answers, not on what the middleware before it refuses.
    if (codesHere.some((code) => operation.errors.includes(code))) headers.push(...extra);
    responses[status] = {
      description: `Error: ${codesHere.map((code) => `\`${code}\``).join(" or ")}`,
      headers: headerRefs(headers, components),
      content: {
        // The codes as examples, not an enum: Error.code is open (api-error.ts).
        "application/json": {
          schema: { allOf: [schemaOf(ErrorBody, components), { properties: { code: { examples: codesHere } } }] },
        },
      },
    };
  }
  return responses;
}

function parametersOf(operation: Operation, components: Components): JsonObject[] {
  const headers = (operation.requestHeaders ?? []).map((name) => ({
    name,
    in: "header",
    required: false,
    ...headerObject(name),
  }));
  const query = (operation.queryParameters ?? []).map(({ name, description, schema }) => ({
    name,
    in: "query",
    required: false,
    description,
    schema,
  }));
  const path = Object.entries(operation.params?.schema.shape ?? {}).map(([name, schema]) => {
    const { description, ...json } = schemaOf(schema as z.ZodType, components);
    return { name, in: "path", required: true, description, schema: json };
  });
  return [...path, ...query, ...headers];
}

/** A request this API sends (OpenAPI 3.1 `webhooks`): what a receiver gets. */
export interface WebhookDescription {
  name: string;
  summary: string;
  description: string;
  body: z.ZodType;
  headers: readonly { name: string; description: string; schema: Record<string, unknown> }[];
  /** What the receiver answers, by status range. */
  responses: Record<string, string>;
}

function webhooksOf(webhooks: readonly WebhookDescription[], components: Components): JsonObject {
  return Object.fromEntries(
    webhooks.map((webhook) => [
      webhook.name,
      {
        post: {
          summary: webhook.summary,
          description: webhook.description,
          parameters: webhook.headers.map(({ name, description, schema }) => ({
            name,
            in: "header",
            required: true,
            description,
            schema,
          })),
          requestBody: {
            required: true,
            content: { "application/json": { schema: schemaOf(webhook.body, components) } },
          },
          responses: Object.fromEntries(
            Object.entries(webhook.responses).map(([status, description]) => [status, { description }]),
          ),
        },
      },
    ]),
  );
}

/** One version's OpenAPI document; this deployment's server first, where the reference page calls. */
export function openApiDocument(
  operations: readonly Operation[],
  config: Pick<Config, "baseUrl" | "productionBaseUrl" | "stagingBaseUrl">,
  version: ApiVersion = API_VERSIONS.v1,
  webhooks: readonly WebhookDescription[] = [],
): JsonObject {
  const serviceRoot = `${config.productionBaseUrl.slice(0, -VERSION_PREFIX.length)}/`;
  const base = (v1BaseUrl: string) => versionBaseUrl(v1BaseUrl, version);
  const servers = [
    { url: base(config.baseUrl), description: "This deployment" },
    { url: base(config.productionBaseUrl), description: "Production" },
    { url: base(config.stagingBaseUrl), description: "Staging" },
  ].filter((server, index, all) => all.findIndex((other) => other.url === server.url) === index);
  const paths: Record<string, JsonObject> = {};
  const components: Components = { headers: new Set<HeaderName>(), schemas: {} };
  // What is routed like an operation but is not one of the API's (the reference page) stays out.
  for (const operation of operations.filter(({ documented }) => documented !== false)) {
    paths[operation.path] = {
      ...paths[operation.path],
      [operation.method]: {
        operationId: operation.operationId,
        summary: operation.summary,
        description: operation.description,
        tags: [operation.tag],
        ...(operation.deprecation && { deprecated: true }),
        "x-stability": operation.stability,
        // Scopes on an http scheme name what a key must be allowed (OpenAPI 3.1, "Security Requirement Object").
        security: operation.public ? [] : [{ bearerAuth: scopesOf(operation) }],
        parameters: parametersOf(operation, components),
        ...(operation.requestBody && {
          requestBody: {
            required: true,
            description: operation.requestBody.description,
            content: { "application/json": { schema: schemaOf(operation.requestBody.schema, components) } },
          },
        }),
        responses: responsesOf(operation, components),
      },
    };
  }

  const sent = webhooksOf(webhooks, components);

  return {
    openapi: "3.1.0",
    info: {
      title: SERVICE.name,
      version: version.version,
      description:
        `Version ${version.prefix.slice(1)} of the Store Orders API: the orders placed in a store. Every operation ` +
        `needs an ` +
        "API key as a bearer token unless marked otherwise, and every response carries rate-limit headers. Each " +
        "operation has an " +
        `x-stability marker: stable (${version.stable}), beta (may still change), experimental (may go away). ` +
        version.ids,
      // GET / at the service's root says what the service is and where its operations live.
      contact: { name: "Store Orders API", url: serviceRoot },
      license: { name: "Proprietary", identifier: "LicenseRef-Proprietary" },
    },
    // The reference page for people, rendered from this document: not an operation of the API.
    externalDocs: { description: "The API reference", url: `${base(config.productionBaseUrl)}/docs` },
    servers,
    security: [{ bearerAuth: [] }],
    // The tags this version's operations use: v2 has no pets.
    tags: Object.entries(TAGS)
      .filter(([name]) => operations.some((operation) => operation.documented !== false && operation.tag === name))
      .map(([name, description]) => ({ name, description })),
    paths,
    ...(webhooks.length > 0 && { webhooks: sent }),
    components: {
      securitySchemes: {
        bearerAuth: {
          type: "http",
          scheme: "bearer",
          description:
            "An API key: so_live_ (production) or so_test_ (staging), 32 random letters and digits, then a " +
            "6-character checksum " +
            "(CRC-32 in base62), so a mistyped or leaked key is recognised " +
            "(docs/api.md#key-format). A key has the scopes " +
            "orders:read (list orders, the event feed; the deprecated pets), orders:write (cancel), webhooks:manage " +
            "(webhook " +
            "endpoints) and keys:manage (rotate and revoke its account's keys); each operation names the " +
            "one it needs, " +
            "or none when " +
            "any key will do. The console's session cookie stands for its key in every operation " +
            "(docs/api.md#the-console).",
        },
      },
      schemas: components.schemas,
      headers: Object.fromEntries([...components.headers].map((name) => [name, headerObject(name)])),
    },
  };
}
