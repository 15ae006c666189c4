/** The step that admits a request (rateLimit), and the repeat of its refusals before identification (replayRefusal). */
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../framework/app-env";
import { errorResponse } from "../framework/api-error";
import { matchRoute } from "../framework/operations/mount-routes";
import { rateLimitHeaders, type RateLimitHeaders, type WrittenHeadersByWindow } from "./rate-limit-headers";
import type { LeaseClient } from "./lease-client";
import type { Admission } from "./lease-book";
import type { BanRule, Verdict } from "./protocol";
import { accessOf, RequestAdmission, type Budget, type CountedCallers, type Recognition } from "./request-admission";

declare module "hono" {
  interface ContextVariableMap {
    /** Set by rateLimit(): the limiter's decision, for the request log. */
    limit?: Verdict["outcome"];
    /** Keys this request changed in their accounts (account-stub.ts): this isolate's word on them goes after it. */
    changedKeys?: { account: string; keyId: string }[];
  }
}

const admit = (c: Context<AppEnv>, leases: LeaseClient, budget: Budget): Promise<Admission> =>
  leases.admit(budget.name, new RequestAdmission(c, budget));

/**
 * The one step that answers "may this caller do this now" (docs/design/rate-limits.md#key-state): for a key, its
 * account says in one answer whether the key stands and the limits admit, from a lease when the isolate holds one; the
 * operation the router matched says what it asks of a key. A refused key counts as a request without one. 429 when
 * the limits say so, 401 or 403 when the key does not do, headers on every response, 503 when the account cannot
 * answer.
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
    const { key } = verdict;
    if (key) {
      callers.verified(c, key);
      if (key.standing !== "live") {
        budget = callers.accountOf(c);
        verdict = await admit(c, leases, budget);
      }
    }
    c.set("limit", verdict.outcome);
    // Prepared before the response exists: set afterwards, each header would copy the response.
    const headers = rateLimitHeaders(verdict, writtenHeaders);
    for (const header in headers) c.header(header, headers[header as keyof typeof headers]);

    const need = verdict.outcome === "admitted" ? matchRoute(c) : undefined;
    const access = accessOf(verdict.outcome, key, need);
    // A 429 is an answer, not a fault: written here with no error thrown, and kept for the next refusal in this state.
    if (access === "limited" || access === "banned") {
      const response =
        access === "banned"
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
    if (access !== "allowed") throw callers.refusal(c, access, need!);
    await next();
    for (const { account, keyId } of c.get("changedKeys") ?? []) leases.forgetKey(account, keyId);
  };
}

/** A refusal as rateLimit() wrote it, with the caller, account and state it was written for. */
interface WrittenRefusal {
  bindings: Env;
  budget: Budget;
  ban: BanRule;
  recognition: Recognition;
  outcome: Verdict["outcome"];
  state: RateLimitHeaders;
  status: number;
  /** Every header the response had but its request id. */
  headers: Headers;
  body: ArrayBuffer;
}

/**
 * Callers whose last refusal is kept, oldest dropped beyond this; at under 1.5 KB each, 1.5 MB of the isolate's 128.
 */
const MAX_KEPT = 1_000;

/** Its name in the app's per-request chain: the bench measures the app without it. */
export const REPLAY_LAYER = "a refusal repeated";

/** The last refusal written to each refused caller, by credential, replayed with a new request id. */
export class WrittenRefusals {
  readonly #entries = new Map<string, WrittenRefusal>();

  get(credential: string): WrittenRefusal | undefined {
    return this.#entries.get(credential);
  }

  set(credential: string, refusal: WrittenRefusal): void {
    this.#entries.delete(credential);
    if (this.#entries.size >= MAX_KEPT) this.#entries.delete(this.#entries.keys().next().value!);
    this.#entries.set(credential, refusal);
  }

  clear(): void {
    this.#entries.clear();
  }
}

/** Keeps the refusal just written (its body copied in the background); never for a cookie or invalid key. */
function keepRefusal(
  c: Context<AppEnv>,
  written: WrittenRefusals,
  callers: CountedCallers,
  budget: Budget,
  verdict: Verdict,
  state: RateLimitHeaders,
  response: Response,
): void {
  const recognition = callers.recognise(c);
  if (!recognition) return;
  const headers = new Headers(response.headers);
  headers.delete("X-Request-Id");
  const { env: bindings } = c;
  const ban = c.get("config").ban;
  c.executionCtx.waitUntil(
    response
      .clone()
      .arrayBuffer()
      .then((body) =>
        written.set(recognition.credential, {
          bindings,
          budget,
          ban,
          recognition,
          outcome: verdict.outcome,
          state,
          status: response.status,
          headers,
          body,
        }),
      ),
  );
}

/**
 * Answers a caller already refused here before the rest of the chain runs again: same credential, same bindings, same
 * refusing state, and the response is that refusal with this request's id. Counted and logged as any refusal; anything
 * else goes the whole way.
 */
export function replayRefusal(
  leases: LeaseClient,
  callers: CountedCallers,
  written: WrittenRefusals,
  writtenHeaders: WrittenHeadersByWindow,
): MiddlewareHandler<AppEnv> {
  return (c, next) => {
    // A preflight is CORS's to answer; a plain OPTIONS is counted like any request, but rarely refused twice.
    const credential = c.req.method === "OPTIONS" ? undefined : callers.credentialOf(c);
    const refusal = credential === undefined ? undefined : written.get(credential);
    if (!refusal || refusal.bindings !== c.env || !refusal.recognition.holds(Date.now())) return next();
    const verdict = leases.refuseKnown(
      refusal.budget.name,
      new RequestAdmission(c, refusal.budget, refusal.ban),
      (candidate) =>
        candidate.outcome === refusal.outcome && rateLimitHeaders(candidate, writtenHeaders) === refusal.state,
    );
    if (!verdict) return next();
    refusal.recognition.restore(c);
    c.set("limit", verdict.outcome);
    c.set("bodyBytes", refusal.body.byteLength);
    // The runtime copies the kept headers into the response once; the request id is set on that copy.
    const response = new Response(refusal.body, { status: refusal.status, headers: refusal.headers });
    response.headers.set("X-Request-Id", c.get("requestId"));
    return Promise.resolve(response);
  };
}
