import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";
import { logLine } from "../lib/log";
import { ApiError } from "../errors";
import { rateLimitHeaders } from "../limiter/headers";
import { LeaseClient } from "../limiter/lease-client";
import { budgetOf } from "../keys/schemas";
import { INVALID_KEY, invalidKey } from "./auth";
import { ANONYMOUS_LIMITS, limitsFor } from "../limiter/plans";

/** This isolate's leases, for every caller it has served lately. */
const leases = new LeaseClient();

/**
 * Admits or refuses the caller before anything else runs, from this isolate's
 * lease when it has one and from the caller's limiter object when it must,
 * refuses with 429 when the limits say so, and puts the rate-limit headers on
 * whatever response follows, errors included. A limiter that cannot answer
 * when it is needed fails closed (503).
 */
export function rateLimit(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const caller = c.get("caller");
    const [name, limits] =
      caller.kind === "key" ? [budgetOf(caller.key), limitsFor(caller.key)] : [`ip:${caller.address}`, ANONYMOUS_LIMITS];
    const requestId = c.get("requestId");
    const verdict = await leases.admit(name, {
      limits,
      ban: c.get("config").ban,
      limiter: (objectName) => c.env.RATE_LIMITER.getByName(objectName),
      background: (work) => c.executionCtx.waitUntil(work),
      onBackgroundError: (error) => logLine("error", requestId, "limiter call in the background failed", { error: String(error) }),
    });
    c.set("limit", verdict.outcome);
    const headers = rateLimitHeaders(verdict);
    // Revoked through the operator API: refused here before KV has spread the news (README, "API keys").
    if (caller.kind === "key" && leases.knowsRevoked(name, caller.key.id)) throw invalidKey(INVALID_KEY, headers);

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
