import { zValidator } from "@hono/zod-validator";
import type { Context, Hono, MiddlewareHandler } from "hono";
import type { z } from "zod";
import type { Config } from "../config";
import type { AppEnv } from "../env";
import { ApiError, type ErrorCode } from "../errors";
import type { DeprecationSchedule } from "../lib/deprecation";
import { requireApiKey } from "../middleware/auth";
import { deprecation } from "../middleware/deprecation";

export type Stability = "stable" | "beta" | "experimental";

/** Response headers the OpenAPI document describes (see openapi.ts). */
export type DocumentedHeader = "ETag" | "If-None-Match" | "Deprecation" | "Sunset" | "Link" | "X-D1-Bookmark";

/** The document's tags, one per resource, with what each groups. */
export const TAGS = {
  Orders: "The orders placed in the store: list them all, cancel pending ones.",
  Pets: "Deprecated pet operations, kept until their sunset date.",
  Service: "About this API itself.",
} as const;

export interface SuccessResponse {
  description: string;
  /** The body's schema; none for 204 and 304. */
  body?: z.ZodType;
  headers?: DocumentedHeader[];
}

/**
 * One public operation: how it is routed, guarded, validated and described.
 * The router, the 405 answers, `GET /` and the OpenAPI document are all built
 * from the one list of these, so what is served and what is documented cannot
 * drift apart.
 */
export interface Operation<Params extends z.ZodType = z.ZodType> {
  operationId: string;
  method: "get" | "delete";
  /** OpenAPI path template, relative to /v1, e.g. `/store/orders/{orderId}`. */
  path: string;
  summary: string;
  description: string;
  tag: keyof typeof TAGS;
  stability: Stability;
  /** Served without an API key (still rate limited per address). */
  public?: boolean;
  /** Present on deprecated operations: their headers and their sunset. */
  deprecation?: (config: Config) => DeprecationSchedule;
  params?: { schema: Params; invalid: { code: ErrorCode; message: string } };
  /** Optional request headers the operation reads (validated by its handler). */
  requestHeaders?: DocumentedHeader[];
  responses: Record<number, SuccessResponse>;
  /** Errors particular to this operation; authentication, limits and outages are added for all. */
  errors: ErrorCode[];
  handle(c: Context<AppEnv>, params: z.output<Params>): Response | Promise<Response>;
}

/** Keeps each operation's own Params type when several are put in one list. */
export function defineOperation<Params extends z.ZodType>(operation: Operation<Params>): Operation {
  return operation as unknown as Operation;
}

/**
 * `{name}` becomes a Hono parameter that also matches an empty segment, so
 * `DELETE /store/orders/` reaches the validator and gets 400, not 404.
 */
export function honoPath(path: string): string {
  return path.replace(/\{(\w+)\}/g, ":$1{[^/]*}");
}

/** Routes every operation under `base` (the version prefix, e.g. `/v1`). */
export function mountOperations(app: Hono<AppEnv>, base: string, operations: readonly Operation[]): void {
  for (const operation of operations) {
    const method = operation.method.toUpperCase();
    const handler: MiddlewareHandler<AppEnv> = async (c) =>
      operation.handle(c, operation.params ? c.req.valid("param" as never) : undefined);
    const chain = [routeName(base + operation.path), ...middlewareOf(operation), handler];
    // Hono's typings cannot follow a spread chain; every element is a plain middleware.
    app.on(method, base + honoPath(operation.path), ...(chain as [MiddlewareHandler<AppEnv>]));
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

function middlewareOf(operation: Operation): MiddlewareHandler<AppEnv>[] {
  const chain: MiddlewareHandler<AppEnv>[] = [];
  if (!operation.public) chain.push(requireApiKey());
  if (operation.deprecation) chain.push(deprecation(operation.deprecation));
  const { params } = operation;
  if (params) {
    chain.push(
      zValidator("param", params.schema, (result) => {
        if (!result.success) throw new ApiError(params.invalid.code, params.invalid.message);
      }) as MiddlewareHandler<AppEnv>,
    );
  }
  return chain;
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
