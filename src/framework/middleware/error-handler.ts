import type { Context, ErrorHandler, NotFoundHandler } from "hono";
import type { AppEnv } from "../app-env";
import { ApiError } from "../api-error";
import { DependencyUnavailable } from "../../lib/call-dependency";
import { API_VERSIONS } from "../service-identity";

const PREFIXES = Object.values(API_VERSIONS).map(({ prefix }) => prefix);

const ANY_VERSION = /^\/v\d+(\/|$)/;

/** The one place an error becomes a response. */
export const handleError: ErrorHandler<AppEnv> = (err, c) => {
  if (err instanceof ApiError) {
    if (err.status >= 500) recordFailure(c, err.cause ?? err);
    return err.toResponse(c);
  }
  if (err instanceof DependencyUnavailable) {
    recordFailure(c, err.cause ?? err);
    return new ApiError(
      "service_unavailable",
      `The service is temporarily unavailable (${err.dependency}). Retry shortly.`,
      {
        "Retry-After": "1",
      },
    ).toResponse(c);
  }
  recordFailure(c, err);
  return new ApiError("internal_error", "Something went wrong on our side. It has been logged.").toResponse(c);
};

export const handleNotFound: NotFoundHandler<AppEnv> = (c) => {
  const { path } = c.req;
  const known = PREFIXES.some((prefix) => path === prefix || path.startsWith(`${prefix}/`));
  if (ANY_VERSION.test(path) && !known) {
    return new ApiError(
      "unsupported_version",
      `This API version does not exist. Use ${PREFIXES.join(" or ")}.`,
    ).toResponse(c);
  }
  return new ApiError("not_found", "No such resource. See GET / for what this service offers.").toResponse(c);
};

/** The request log (framework/middleware/request-log.ts) writes it on the request's one line. */
function recordFailure(c: Context<AppEnv>, error: unknown): void {
  c.set("failure", error instanceof Error ? `${error.name}: ${error.message}` : String(error));
}
