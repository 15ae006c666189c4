import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import type { AppEnv } from "../env";
import { ApiError, errorResponse } from "../errors";

const VERSION_PREFIX = /^\/v\d+(\/|$)/;

/** The one place an error becomes a response. */
export const handleError: ErrorHandler<AppEnv> = (err, c) => {
  if (err instanceof ApiError) {
    if (err.status >= 500) logFailure(c, err.cause ?? err);
    return errorResponse(c, err);
  }
  logFailure(c, err);
  return errorResponse(c, new ApiError("internal_error", "Something went wrong on our side. It has been logged."));
};

export const handleNotFound: NotFoundHandler<AppEnv> = (c) => {
  const { path } = c.req;
  if (VERSION_PREFIX.test(path) && !path.startsWith("/v1/") && path !== "/v1") {
    return errorResponse(c, new ApiError("unsupported_version", "This API version does not exist. Use /v1."));
  }
  return errorResponse(c, new ApiError("not_found", "No such resource. See GET / for what this service offers."));
};

function logFailure(c: Context<AppEnv>, error: unknown): void {
  const detail = error instanceof Error ? `${error.name}: ${error.message}` : String(error);
  console.error(JSON.stringify({ requestId: c.get("requestId"), level: "error", error: detail }));
}
