import { zValidator } from "@hono/zod-validator";
import type { Context, Hono } from "hono";
import type { z } from "zod";
import type { AppEnv } from "../env";
import { ApiError, type ErrorCode } from "../errors";

export type Stability = "stable" | "beta" | "experimental";

/**
 * One public operation: how it is routed, validated and described. The router
 * (and, from the same list, the 405 answers and the OpenAPI document) is built
 * from these, so what is served and what is documented cannot drift apart.
 */
export interface Operation<Params extends z.ZodType = z.ZodType> {
  operationId: string;
  method: "get" | "delete";
  /** OpenAPI path template, relative to /v1, e.g. `/store/orders/{orderId}`. */
  path: string;
  summary: string;
  stability: Stability;
  deprecated?: boolean;
  params?: { schema: Params; invalid: { code: ErrorCode; message: string } };
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

export function mountOperations(app: Hono<AppEnv>, operations: readonly Operation[]): void {
  const methodsByPath = new Map<string, string[]>();
  for (const operation of operations) {
    const path = honoPath(operation.path);
    const method = operation.method.toUpperCase();
    methodsByPath.set(path, [...(methodsByPath.get(path) ?? []), method]);

    const { params } = operation;
    if (params) {
      const validate = zValidator("param", params.schema, (result) => {
        if (!result.success) throw new ApiError(params.invalid.code, params.invalid.message);
      });
      app.on(method, path, validate, (c) => operation.handle(c, c.req.valid("param" as never)));
    } else {
      app.on(method, path, (c) => operation.handle(c, undefined));
    }
  }

  // Registered after every operation, so it only answers methods none of them took.
  for (const [path, methods] of methodsByPath) {
    const allow = allowHeader(methods);
    app.all(path, (c) => {
      throw new ApiError("method_not_allowed", `${c.req.method} is not allowed here. Allowed: ${allow}.`, {
        Allow: allow,
      });
    });
  }
}

function allowHeader(methods: string[]): string {
  // Hono answers HEAD from the GET handler.
  return (methods.includes("GET") ? [...methods, "HEAD"] : methods).join(", ");
}
