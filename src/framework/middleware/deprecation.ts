import type { MiddlewareHandler } from "hono";
import type { Config } from "../read-config";
import type { AppEnv } from "../app-env";
import { ApiError } from "../api-error";
import { deprecationHeaders, isSunset, type DeprecationSchedule } from "../../lib/deprecation-schedule";

/** Marks a deprecated operation's responses, and retires it with 410 from its sunset date. */
export function deprecation(schedule: (config: Config) => DeprecationSchedule): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const current = schedule(c.get("config"));
    const headers = deprecationHeaders(current);
    if (isSunset(current, Date.now())) {
      throw new ApiError(
        "endpoint_sunset",
        `This endpoint was retired on ${headers.Sunset}. See the Link header.`,
        headers,
      );
    }
    // Prepared before the response exists, so they join it as it is made (rate-limit.ts says why).
    for (const [header, value] of Object.entries(headers)) c.header(header, value);
    await next();
  };
}
