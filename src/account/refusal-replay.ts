import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../framework/app-env";
import type { LeaseClient } from "./lease-client";
import type { BanRule, Verdict } from "./protocol";
import { RequestAdmission, type Budget, type CountedCallers, type Recognition } from "./request-admission";
import { rateLimitHeaders, type RateLimitHeaders, type WrittenHeadersByWindow } from "./rate-limit-headers";

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
export function keepRefusal(
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
