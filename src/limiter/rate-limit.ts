import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv, Caller } from "../framework/app-env";
import { logLine } from "../lib/log";
import { errorResponse } from "../framework/api-error";
import { rateLimitHeaders } from "./rate-limit-headers";
import type { LeaseClient } from "./lease-client";
import type { Verdict } from "./protocol";
import { budgetOf } from "../keys/api-key-record";
import { invalidCaller } from "../keys/api-key-auth";
import { ANONYMOUS_LIMITS, PLAN_LIMITS_REVISED_AT, limitsFor, limitsStampOf } from "./plans";

/** True when the key's budget has told this isolate the key is revoked (operator API), before KV has spread the news. */
const knownRevoked = (leases: LeaseClient, caller: Caller) => caller.kind === "key" && leases.knowsRevoked(budgetOf(caller.key), caller.key.id);

function admit(c: Context<AppEnv>, leases: LeaseClient, caller: Caller): Promise<Verdict> {
  const requestId = c.get("requestId");
  const asker =
    caller.kind === "key"
      ? { name: budgetOf(caller.key), limits: limitsFor(caller.key), limitsSetAt: limitsStampOf(caller.key), keyId: caller.key.id }
      : { name: `ip:${caller.address}`, limits: ANONYMOUS_LIMITS, limitsSetAt: PLAN_LIMITS_REVISED_AT };
  return leases.admit(asker.name, {
    ...asker,
    ban: c.get("config").ban,
    limiter: (objectName) => c.env.RATE_LIMITER.getByName(objectName),
    background: (work) => c.executionCtx.waitUntil(work),
    onBackgroundError: (error) => logLine("error", requestId, "limiter call in the background failed", { error: String(error) }),
  });
}

/**
 * Admits or refuses the caller before anything else runs, from this isolate's
 * lease when it has one and from the caller's limiter object when it must,
 * (this isolate's leases, isolate-memory.ts), refuses with 429 when the limits say so, and puts the rate-limit headers on
 * whatever response follows, errors included. A limiter that cannot answer
 * when it is needed fails closed (503). A key revoked through the operator
 * API is counted as what it now is, a caller without a valid key: it never
 * spends its budget nor counts toward its ban (docs/operations.md#api-keys).
 */
export function rateLimit(leases: LeaseClient): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    let caller = c.get("caller");
    if (knownRevoked(leases, caller)) caller = invalidCaller(caller.address);
    let verdict = await admit(c, leases, caller);
    // The budget's object refused the key as revoked without counting it: count the request by its address instead.
    if (knownRevoked(leases, caller)) {
      caller = invalidCaller(caller.address);
      verdict = await admit(c, leases, caller);
    }
    c.set("caller", caller);
    c.set("limit", verdict.outcome);
    // Prepared before the response exists, so they join it as it is made: set afterwards, each header would copy the response.
    const headers = rateLimitHeaders(verdict);
    for (const header in headers) c.header(header, headers[header as keyof typeof headers]);

    // A refusal is the limiter's answer, not a fault: written here, with no error to build and throw on every refused request.
    if (verdict.outcome === "banned") {
      return errorResponse(c, "api_key_banned", `Too many requests were sent while rate limited; this caller is banned for ${verdict.retryAfter} more seconds.`);
    }
    if (verdict.outcome === "limited") {
      return errorResponse(
        c,
        "rate_limit_exceeded",
        `The ${verdict.reported} limit of ${verdict[verdict.reported].limit} requests is used up. Retry after ${verdict.retryAfter} seconds, and back off exponentially.`,
      );
    }
    await next();
  };
}
