import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../framework/app-env";
import { errorResponse } from "../framework/api-error";
import { rateLimitHeaders, type WrittenHeadersByWindow } from "./rate-limit-headers";
import type { LeaseClient } from "./lease-client";
import type { Verdict } from "./protocol";
import { keepRefusal, type WrittenRefusals } from "./refusal-replay";
import { RequestAdmission, type Budget, type CountedCallers } from "./request-admission";
import type { Admission } from "./lease-book";

declare module "hono" {
  interface ContextVariableMap {
    /** Set by rateLimit(): the limiter's decision, for the request log. */
    limit?: Verdict["outcome"];
    /** Keys this request changed in their accounts (keys/forget-key.ts): this isolate's word on them goes after it. */
    changedKeys?: { account: string; keyId: string }[];
  }
}

const admit = (c: Context<AppEnv>, leases: LeaseClient, budget: Budget): Promise<Admission> =>
  leases.admit(budget.name, new RequestAdmission(c, budget));

/**
 * The one step that answers "may this caller do this now" (docs/design/rate-limits.md#key-state): for a key, its
 * account says in one answer whether the key stands and the limits admit, from a lease when the isolate holds one. A
 * refused key counts as a request without one. 429 when the limits say so, headers on every response, 503 when the
 * account cannot answer.
 */
export function rateLimit(
  leases: LeaseClient,
  callers: CountedCallers,
  written: WrittenRefusals,
  writtenHeaders: WrittenHeadersByWindow,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const identified = callers.accountOf(c);
    let budget = identified;
    let verdict = await admit(c, leases, budget);
    if (verdict.key) {
      callers.verified(c, verdict.key);
      if (verdict.key.standing !== "live") {
        budget = callers.accountOf(c);
        verdict = await admit(c, leases, budget);
      }
    }
    c.set("limit", verdict.outcome);
    // Prepared before the response exists: set afterwards, each header would copy the response.
    const headers = rateLimitHeaders(verdict, writtenHeaders);
    for (const header in headers) c.header(header, headers[header as keyof typeof headers]);

    // A refusal is an answer, not a fault: written here with no error thrown, and kept for the next refusal in this
    // state.
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
    for (const { account, keyId } of c.get("changedKeys") ?? []) leases.forgetKey(account, keyId);
  };
}
