import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../framework/app-env";
import { logLine } from "../lib/log";
import { errorResponse } from "../framework/api-error";
import { rateLimitHeaders } from "./rate-limit-headers";
import type { AdmitContext, LeaseClient } from "./lease-client";
import type { Limits } from "./plans";
import type { Verdict } from "./protocol";

declare module "hono" {
  interface ContextVariableMap {
    /** Set by rateLimit(): the limiter's decision, for the request log. */
    limit?: Verdict["outcome"];
    /** Set by an operation that revoked a key: its budget's revoked keys as the object answered, learned once it has answered. */
    revocation?: { budget: string; revoked: readonly string[] };
  }
}

/** What a request is counted against: a key's budget, or an address's. */
export interface Budget {
  name: string;
  limits: Limits;
  /** When those limits were set, Unix ms: the budget's object keeps the newest it is shown. */
  limitsSetAt: number;
  /** The key's id, when a key is counted: the object may know it revoked before KV does. */
  keyId?: string;
}

/**
 * How the caller that identification found is counted, handed to rateLimit()
 * by the app (keys/counted-callers.ts): the limiter knows budgets, not keys.
 */
export interface CountedCallers {
  budgetOf(c: Context<AppEnv>): Budget;
  /** The caller's key is revoked: from now on the request is what it is, one without a valid key. */
  demote(c: Context<AppEnv>): void;
}

/** True when the key's budget has told this isolate the key is revoked (operator API), before KV has spread the news. */
const knownRevoked = (leases: LeaseClient, budget: Budget) => budget.keyId !== undefined && leases.knowsRevoked(budget.name, budget.keyId);

/**
 * What the lease client may ask of one request: its budget, the ban rule,
 * the limiter objects, the request's background work. One object a request,
 * not a copy of the budget and a closure per need: the refusals this path
 * answers cost little more than writing them (docs/design/performance.md#what-the-floors-show).
 */
class RequestAdmission implements AdmitContext {
  readonly limits: Limits;
  readonly limitsSetAt: number;
  readonly keyId: string | undefined;
  readonly ban: AdmitContext["ban"];
  readonly #c: Context<AppEnv>;

  constructor(c: Context<AppEnv>, budget: Budget) {
    this.#c = c;
    this.limits = budget.limits;
    this.limitsSetAt = budget.limitsSetAt;
    this.keyId = budget.keyId;
    this.ban = c.get("config").ban;
  }

  limiter(name: string) {
    return this.#c.env.RATE_LIMITER.getByName(name);
  }

  background(work: Promise<unknown>): void {
    this.#c.executionCtx.waitUntil(work);
  }

  onBackgroundError(error: unknown): void {
    logLine("error", this.#c.get("requestId"), "limiter call in the background failed", { error: String(error) });
  }
}

const admit = (c: Context<AppEnv>, leases: LeaseClient, budget: Budget): Promise<Verdict> => leases.admit(budget.name, new RequestAdmission(c, budget));

/**
 * Admits or refuses the caller before anything else runs, from this isolate's
 * lease when it has one and from the budget's limiter object when it must;
 * refuses with 429 when the limits say so, and puts the rate-limit headers on
 * whatever response follows, errors included. A limiter that cannot answer
 * when it is needed fails closed (503). A key revoked through the operator
 * API is counted as what it now is, a caller without a valid key: it never
 * spends its budget nor counts toward its ban (docs/operations.md#api-keys).
 */
export function rateLimit(leases: LeaseClient, callers: CountedCallers): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    let budget = callers.budgetOf(c);
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
    const revocation = c.get("revocation");
    if (revocation) leases.learnRevoked(revocation.budget, revocation.revoked);
  };
}
