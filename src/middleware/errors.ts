import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import type { AppEnv } from "../env";
import { ApiError, errorResponse } from "../errors";

const VERSION_PREFIX = /^\/v\d+(\/|$)/;

/** The one place an error becomes a response. */
export const handleError: ErrorHandler<AppEnv> = (err, c) => {
  if (err instanceof ApiError) {
    if (err.status >= 500) recordFailure(c, err.cause ?? err);
    return errorResponse(c, err);
  }
  recordFailure(c, err);
  return errorResponse(c, new ApiError("internal_error", "Something went wrong on our side. It has been logged."));
};

export const handleNotFound: NotFoundHandler<AppEnv> = (c) => {
  const { path } = c.req;
  if (VERSION_PREFIX.test(path) && !path.startsWith("/v1/") && path !== "/v1") {
    return errorResponse(c, new ApiError("unsupported_version", "This API version does not exist. Use /v1."));
  }
  return errorResponse(c, new ApiError("not_found", "No such resource. See GET / for what this service offers."));
};

/** The request log (middleware/request-log.ts) writes it on the request's one line. */
function recordFailure(c: Context<AppEnv>, error: unknown): void {
  c.set("failure", error instanceof Error ? `${error.name}: ${error.message}` : String(error));
}
