import { zValidator } from "@hono/zod-validator";
import type { Context, Hono, MiddlewareHandler } from "hono";
import type { z } from "zod";
import type { Config } from "../config";
import type { AppEnv } from "../env";
import { ApiError, type ErrorCode } from "../errors";
import type { HeaderName } from "../headers";
import type { Scope } from "../keys/schemas";
import type { DeprecationSchedule } from "../lib/deprecation";
import { requireApiKey } from "../middleware/auth";
import { deprecation } from "../middleware/deprecation";
import { referenceLink } from "./reference-page";

type Stability = "stable" | "beta" | "experimental";

/** The document's tags, one per resource, with what each groups. */
export const TAGS = {
  Orders: "The orders placed in the store: list them all, cancel pending ones.",
  Pets: "Deprecated pet operations, kept until their sunset date.",
  Service: "About this API itself.",
} as const;

interface SuccessResponse {
  description: string;
  /** The body's schema; none for 204 and 304. */
  body?: z.ZodType;
  headers?: HeaderName[];
}

type Reply = Response | Promise<Response>;

/** Who may call: anyone (still rate limited per address), or keys with a scope (README, "API keys"). */
type Access = { public: true; scope?: undefined } | { public?: false; scope: Scope };

/** What describes an operation, for the router, `GET /` and the OpenAPI document. */
type OperationDescription = Access & {
  operationId: string;
  method: "get" | "delete";
  /** OpenAPI path template, relative to the version prefix, e.g. `/store/orders/{orderId}`. */
  path: string;
  summary: string;
  description: string;
  tag: keyof typeof TAGS;
  stability: Stability;
  /** Present on deprecated operations: their dates (the Link goes to the operation's section of the reference page). */
  deprecation?: (config: Config) => Omit<DeprecationSchedule, "link">;
  /** Optional request headers the operation reads (validated by its handler). */
  requestHeaders?: HeaderName[];
  responses: Record<number, SuccessResponse>;
  /** Errors particular to this operation; authentication, limits and outages are added for all. */
  errors: ErrorCode[];
};

interface PathParams<P extends z.ZodObject> {
  schema: P;
  /** The error a value that does not fit gets. */
  invalid: { code: ErrorCode; message: string };
}

/** An operation as it is written: with path parameters its handler gets them validated, without them it gets none. */
type OperationSpec<P extends z.ZodObject> = OperationDescription &
  (
    | { params: PathParams<P>; handle(c: Context<AppEnv>, params: z.output<P>): Reply }
    | { params?: undefined; handle(c: Context<AppEnv>): Reply }
  );

/**
 * One public operation: how it is routed, guarded, validated and described.
 * The router, the 405 answers, CORS, `GET /` and the OpenAPI document are all
 * built from the one list of these, so what is served and what is documented
 * cannot drift apart.
 */
export type Operation = OperationDescription & {
  params?: PathParams<z.ZodObject>;
  /** Its parameters' validation, then the operation; mountOperations() puts the guards its description asks for before them. */
  run: MiddlewareHandler<AppEnv>[];
};

export function defineOperation<P extends z.ZodObject>(spec: OperationSpec<P>): Operation {
  const run: MiddlewareHandler<AppEnv>[] = [];
  if (spec.params) {
    const { params, handle } = spec;
    run.push(
      zValidator("param", params.schema, (result, _c: Context<AppEnv>) => {
        if (!result.success) throw new ApiError(params.invalid.code, params.invalid.message);
      }),
      async (c: Context<AppEnv, string, { out: { param: z.output<P> } }>) => handle(c, c.req.valid("param")),
    );
  } else {
    const { handle } = spec;
    run.push(async (c) => handle(c));
  }
  const { handle: _, ...description } = spec;
  return { ...description, run };
}

/** The guards an operation's description asks for: a key with its scope unless it is public, the deprecation headers and sunset. */
function guardsOf(operation: Operation): MiddlewareHandler<AppEnv>[] {
  const key = operation.public ? [] : [requireApiKey(operation.scope)];
  const dates = operation.deprecation;
  if (!dates) return key;
  return [...key, deprecation((config) => ({ ...dates(config), link: referenceLink(config.baseUrl, operation) }))];
}

/**
 * `{name}` becomes a Hono parameter that also matches an empty segment, so
 * `DELETE /store/orders/` reaches the validator and gets 400, not 404.
 */
function honoPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ":$1{[^/]*}");
}

/** Routes every operation under `base` (the version prefix). */
export function mountOperations(app: Hono<AppEnv>, base: string, operations: readonly Operation[]): void {
  for (const operation of operations) {
    const path = base + honoPath(operation.path);
    const method = operation.method.toUpperCase();
    // Handlers registered for one route run in order, each passing on with next().
    for (const handler of [routeName(base + operation.path), ...guardsOf(operation), ...operation.run]) app.on(method, path, handler);
  }

  // Registered after every operation, so it only answers methods none of them took.
  for (const [path, methods] of methodsByPath(operations)) {
    const allow = methods.join(", ");
    app.all(base + honoPath(path), routeName(base + path), (c) => {
      throw new ApiError("method_not_allowed", `${c.req.method} is not allowed here. Allowed: ${allow}.`, {
        Allow: allow,
      });
    });
  }
}

function routeName(route: string): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set("route", route);
    await next();
  };
}

/** The methods each path template answers: its operations', HEAD with GET (Hono answers it from GET), and OPTIONS (CORS). */
function methodsByPath(operations: readonly Operation[]): Map<string, string[]> {
  const byPath = new Map<string, string[]>();
  for (const { path, method } of operations) byPath.set(path, [...(byPath.get(path) ?? []), method.toUpperCase()]);
  for (const [path, methods] of byPath) byPath.set(path, [...methods, ...(methods.includes("GET") ? ["HEAD"] : []), "OPTIONS"]);
  return byPath;
}

/**
 * For a request path, the methods its operation path answers (the 405's Allow
 * list), or an empty list for a path no operation serves. CORS preflights
 * answer with it, so a browser learns what this path really allows.
 */
export function allowedMethods(base: string, operations: readonly Operation[]): (path: string) => string[] {
  const patterns = [...methodsByPath(operations)].map(([path, methods]) => {
    const literal = (text: string) => text.replace(/[.*+?^${}()|[\]\\]/g, "\\$&");
    const source = (base + path).split(/\{\w+\}/).map(literal).join("[^/]*");
    return { pattern: new RegExp(`^${source}$`), methods };
  });
  return (path) => patterns.find(({ pattern }) => pattern.test(path))?.methods ?? [];
}
