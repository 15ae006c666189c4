import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { callDependency } from "../lib/dependency";
import { rateLimitHeaders } from "../limiter/headers";
import { ANONYMOUS_LIMITS, limitsFor } from "../limiter/plans";

/**
 * A limiter answers in milliseconds; one that has not answered in a second is
 * treated as failed (and retried once). A timed-out check may still have
 * counted the request: that errs towards refusing, never towards over-admitting.
 */
export const LIMITER_TIMEOUT_MS = 1_000;

/**
 * Asks the caller's limiter object before anything else runs, refuses with
 * 429 when it says so, and puts the rate-limit headers on whatever response
 * follows, errors included. A limiter that cannot answer fails closed (503).
 */
export function rateLimit(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const caller = c.get("caller");
    const [name, limits] =
      caller.kind === "key" ? [caller.key.id, limitsFor(caller.key)] : [`ip:${caller.address}`, ANONYMOUS_LIMITS];
    const limiter = c.env.RATE_LIMITER.getByName(name);
    const verdict = await callDependency("rate limiter", () => limiter.check(limits, c.get("config").ban), {
      timeoutMs: LIMITER_TIMEOUT_MS,
    });
    c.set("limit", verdict.outcome);
    const headers = rateLimitHeaders(verdict);

    if (verdict.outcome === "banned") {
      throw new ApiError(
        "api_key_banned",
        `Too many requests were sent while rate limited; this caller is banned for ${verdict.retryAfter} more seconds.`,
        headers,
      );
    }
    if (verdict.outcome === "limited") {
      throw new ApiError(
        "rate_limit_exceeded",
        `The ${verdict.reported} limit of ${verdict[verdict.reported].limit} requests is used up. Retry after ${verdict.retryAfter} seconds, and back off exponentially.`,
        headers,
      );
    }
    await next();
    for (const [header, value] of Object.entries(headers)) c.header(header, value);
  };
}
