import { zValidator } from "@hono/zod-validator";
import type { Context, MiddlewareHandler } from "hono";
import type { z } from "zod";
import type { Config } from "../read-config";
import type { AppEnv } from "../app-env";
import { ApiError, type ErrorCode } from "../api-error";
import type { HeaderName } from "../header-catalogue";
import { ANY_KEY, type KeyRequirement, type Scope } from "./scopes";
import type { DeprecationSchedule } from "../../lib/deprecation-schedule";

export type Stability = "stable" | "beta" | "experimental";

/** The document's tags, one per resource, with what each groups. */
export const TAGS = {
  Orders: "The orders placed in the store: list them, cancel pending ones.",
  Events: "Every change to an order, whoever made it: a feed to follow.",
  Webhooks: "Where an account's order events are delivered, signed, as they happen.",
  Keys: "The keys of the caller's account: see them, rotate the calling one with a grace period, revoke one early.",
  Console: "The console's sign-in: a session for the web page, opened with a key or an operator's single-use link.",
  Usage: "What the limiter admitted and refused for the caller's account, minute by minute, hour by hour, day by day.",
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

/** Who may call: anyone (rate limited per address), keys with a scope, any valid key, or operators. */
type Access =
  | { public: true; scope?: undefined; operator?: undefined }
  | {
      public?: false;
      scope: KeyRequirement;
      /** A scope needed besides: what the operation sends on is read with it. */
      alsoScope?: Scope;
      /** Set where it acts beyond the calling key (on what, named in the 403): a key rotated away may not call it. */
      beyondItself?: string;
      operator?: undefined;
    }
  | { public?: false; scope?: undefined; operator: true };

/** What describes an operation, for the router, `GET /` and the OpenAPI document. */
type OperationDescription = Access & {
  operationId: string;
  method: "get" | "post" | "patch" | "delete";
  /** OpenAPI path template, relative to the version prefix, e.g. `/store/orders/{orderId}`. */
  path: string;
  summary: string;
  description: string;
  tag: keyof typeof TAGS;
  stability: Stability;
  /** Present on deprecated operations: their dates (the Link goes to the operation's section of the reference page). */
  deprecation?: (config: Config) => Omit<DeprecationSchedule, "link">;
  /** Query parameters the operation reads (validated by its handler): each with its JSON schema, all optional. */
  queryParameters?: readonly { name: string; description: string; schema: Record<string, unknown> }[];
  /** The JSON body the operation takes (read with readJsonBody() by its handler). */
  requestBody?: { description: string; schema: z.ZodType };
  /** Optional request headers the operation reads (validated by its handler). */
  requestHeaders?: readonly HeaderName[];
  /** A write a retry may repeat safely: it takes an Idempotency-Key, checked after the caller's access. */
  idempotent?: true;
  responses: Record<number, SuccessResponse>;
  /** Errors particular to this operation; authentication, limits and outages are added for all. */
  errors: readonly ErrorCode[];
  /** False for what is routed like an operation but left out of the documents (GET /, the reference page). */
  documented?: false;
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
 * One operation: how it is routed, guarded, validated and described. Routes, 405s, CORS, `GET /` and the OpenAPI
 * documents are all built from these, so what is served and what is documented cannot drift.
 */
export type Operation = OperationDescription & {
  params?: PathParams<z.ZodObject>;
  /** Its parameters' validation, then the operation; the guards go before them. */
  run: MiddlewareHandler<AppEnv>[];
};

/** Every scope an operation asks of a key: none for one any valid key may call, or one that asks no key. */
export const scopesOf = (operation: Operation): Scope[] =>
  operation.public || operation.operator
    ? []
    : [operation.scope, operation.alsoScope].filter((scope) => scope !== undefined && scope !== ANY_KEY);

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
