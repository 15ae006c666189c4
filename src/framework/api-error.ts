import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import { z } from "zod";
import type { HeaderName } from "./header-catalogue";
import { jsonBody } from "./counted-body";

declare global {
  interface ErrorConstructor {
    /** V8's: how many frames a new Error captures. workerd has it; its type definitions leave it out. */
    stackTraceLimit: number;
  }
}

/** The one table of error codes and their HTTP statuses (docs/api.md#errors). */
export const ERROR_STATUS = {
  invalid_order_id: 400,
  invalid_pet_id: 400,
  invalid_bookmark: 400,
  invalid_query: 400,
  invalid_cursor: 400,
  invalid_limits: 400,
  invalid_body: 400,
  invalid_webhook_url: 400,
  invalid_idempotency_key: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  invalid_console_link: 401,
  session_ended: 401,
  invalid_access_assertion: 401,
  invalid_signature: 401,
  insufficient_scope: 403,
  key_acts_only_on_itself: 403,
  cross_site_request: 403,
  order_not_found: 404,
  key_not_found: 404,
  pet_not_found: 404,
  webhook_endpoint_not_found: 404,
  webhook_delivery_not_found: 404,
  not_found: 404,
  unsupported_version: 404,
  method_not_allowed: 405,
  order_already_shipped: 409,
  too_many_webhook_endpoints: 409,
  webhook_endpoint_disabled: 409,
  webhook_endpoint_locked: 409,
  webhook_url_unconfirmed: 409,
  event_sequence_too_low: 409,
  idempotency_key_in_flight: 409,
  operator_exists: 409,
  too_many_keys: 409,
  cursor_expired: 410,
  endpoint_sunset: 410,
  body_too_large: 413,
  unsupported_media_type: 415,
  idempotency_key_reused: 422,
  rate_limit_exceeded: 429,
  api_key_banned: 429,
  too_many_test_events: 429,
  internal_error: 500,
  order_list_too_large: 500,
  traffic_not_configured: 501,
  service_unavailable: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;
type ErrorStatus = (typeof ERROR_STATUS)[ErrorCode];

/** Headers every error of a status carries, beyond the ones on every response. */
export const ERROR_STATUS_HEADERS: Partial<Record<ErrorStatus, readonly HeaderName[]>> = {
  401: ["WWW-Authenticate"],
  403: ["WWW-Authenticate"],
  405: ["Allow"],
  429: ["Retry-After"],
  503: ["Retry-After"],
};

/**
 * The Error shape of every error body, one schema for validation, types and the document. `code` is an open string, the
 * table's codes its examples: new codes may come, and a closed enum would break generated clients.
 */
export const ErrorBody = z
  .object({
    code: z
      .string()
      .meta({ examples: Object.keys(ERROR_STATUS) })
      .describe(
        "Machine-readable error code: one of the examples, or one added later; a client that does not know a code " +
          "acts on the HTTP status",
      ),
    message: z.string().describe("Human-readable description"),
    status: z.number().int().describe("The HTTP status code"),
  })
  .meta({ id: "Error" });

/** An error the client sees as it is; it builds its own response, as Hono's HTTPException does. */
export class ApiError extends HTTPException {
  readonly code: ErrorCode;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}, cause?: unknown) {
    // A client error is an outcome, not a fault: no stack to capture, most of a throw's cost. Server errors keep
    // theirs.
    const stackTraceLimit = Error.stackTraceLimit;
    if (ERROR_STATUS[code] < 500) Error.stackTraceLimit = 0;
    try {
      super(ERROR_STATUS[code], { message, cause });
    } finally {
      Error.stackTraceLimit = stackTraceLimit;
    }
    this.code = code;
    this.headers = headers;
  }

  /** The Error body, with the headers prepared on the context (request id, limits, CORS) kept. */
  toResponse(c: Context): Response {
    return errorResponse(c, this.code, this.message, this.headers);
  }
}

/** Every error response: the code's status and the Error body, with the headers set on the context kept. */
export function errorResponse(
  c: Context,
  code: ErrorCode,
  message: string,
  headers: Record<string, string> = {},
): Response {
  const status = ERROR_STATUS[code];
  const body: z.infer<typeof ErrorBody> = { code, message, status };
  return jsonBody(c, body, status, headers);
}
