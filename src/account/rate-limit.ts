import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../framework/app-env";
import { errorResponse } from "../framework/api-error";
import { rateLimitHeaders, type WrittenHeadersByWindow } from "./rate-limit-headers";
import type { LeaseClient } from "./lease-client";
import type { Verdict } from "./protocol";
import { keepRefusal, type WrittenRefusals } from "./refusal-replay";
import { RequestAdmission, knownRevoked, type Budget, type CountedCallers } from "./request-admission";

declare module "hono" {
  interface ContextVariableMap {
    /** Set by rateLimit(): the limiter's decision, for the request log. */
    limit?: Verdict["outcome"];
    /**
     * Set by an operation that revoked a key: its budget's revoked keys as the object answered, learned once it has
     * answered.
     */
    revocation?: { budget: string; revoked: readonly string[] };
  }
}

const admit = (c: Context<AppEnv>, leases: LeaseClient, budget: Budget): Promise<Verdict> =>
  leases.admit(budget.name, new RequestAdmission(c, budget));

/**
 * Admits or refuses the caller before anything else runs, from this isolate's
 * lease when it has one and from the budget's limiter object when it must;
 * refuses with 429 when the limits say so, and puts the rate-limit headers on
 * whatever response follows, errors included. A limiter that cannot answer
 * when it is needed fails closed (503). A key revoked through the operator
 * API is counted as what it now is, a caller without a valid key: it never
 * spends its budget nor counts toward its ban (docs/operations.md#api-keys).
 */
export function rateLimit(
  leases: LeaseClient,
  callers: CountedCallers,
  written: WrittenRefusals,
  writtenHeaders: WrittenHeadersByWindow,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const identified = callers.budgetOf(c);
    let budget = identified;
    if (knownRevoked(leases, budget)) {
      callers.demote(c);
      budget = callers.budgetOf(c);
    }
    let verdict = await admit(c, leases, budget);
    // The budget's object refused the key as revoked without counting it: count the request by its address instead.
    if (knownRevoked(leases, budget)) {
      callers.demote(c);
      budget = callers.budgetOf(c);
      verdict = await admit(c, leases, budget);
    }
    c.set("limit", verdict.outcome);
    // Prepared before the response exists, so they join it as it is made: set afterwards, each header would copy the
    // response.
    const headers = rateLimitHeaders(verdict, writtenHeaders);
    for (const header in headers) c.header(header, headers[header as keyof typeof headers]);

    // A refusal is the limiter's answer, not a fault: written here, with no error to build and throw on every refused
    // request; kept, so that the caller's next refusal in this state is this response again (refusal-replay.ts).
    if (verdict.outcome !== "admitted") {
      const response =
        verdict.outcome === "banned"
          ? errorResponse(
              c,
              "api_key_banned",
              `Too many requests were sent while rate limited; this caller is banned for ${verdict.retryAfter} more ` +
                `seconds.`,
            )
          : errorResponse(
              c,
              "rate_limit_exceeded",
              `The ${verdict.reported} limit of ${verdict[verdict.reported].limit} requests is used up. Retry after ` +
                `${verdict.retryAfter} seconds, and back off exponentially.`,
            );
      if (budget === identified) keepRefusal(c, written, callers, budget, verdict, headers, response);
      return response;
    }
    await next();
    const revocation = c.get("revocation");
    if (revocation) leases.learnRevoked(revocation.budget, revocation.revoked);
  };
}
