import type { Context } from "hono";
import { HTTPException } from "hono/http-exception";
import type { ContentfulStatusCode } from "hono/utils/http-status";
import type { z } from "zod";
import type { ErrorBody } from "./schemas/error";

/** The one table of error codes and their HTTP statuses (CONTRACT section 2). */
export const ERROR_STATUS = {
  invalid_order_id: 400,
  invalid_pet_id: 400,
  invalid_bookmark: 400,
  missing_api_key: 401,
  invalid_api_key: 401,
  order_not_found: 404,
  pet_not_found: 404,
  not_found: 404,
  unsupported_version: 404,
  method_not_allowed: 405,
  order_already_shipped: 409,
  endpoint_sunset: 410,
  rate_limit_exceeded: 429,
  api_key_banned: 429,
  internal_error: 500,
  service_unavailable: 503,
} as const satisfies Record<string, ContentfulStatusCode>;

export type ErrorCode = keyof typeof ERROR_STATUS;

/** Headers every error of a status carries, beyond the ones on every response. */
export const ERROR_STATUS_HEADERS: Partial<Record<ContentfulStatusCode, readonly ("WWW-Authenticate" | "Allow" | "Retry-After")[]>> = {
  401: ["WWW-Authenticate"],
  405: ["Allow"],
  429: ["Retry-After"],
  503: ["Retry-After"],
};

/** An error the client should see as it is: a code from the table, a message for people, extra headers. */
export class ApiError extends HTTPException {
  readonly code: ErrorCode;
  readonly headers: Record<string, string>;

  constructor(code: ErrorCode, message: string, headers: Record<string, string> = {}, cause?: unknown) {
    super(ERROR_STATUS[code], { message, cause });
    this.code = code;
    this.headers = headers;
  }
}

export function errorResponse(c: Context, err: ApiError): Response {
  const body: z.infer<typeof ErrorBody> = { code: err.code, message: err.message, status: err.status };
  return c.json(body, err.status, err.headers);
}
