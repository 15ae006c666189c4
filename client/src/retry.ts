/** How the client retries (README, "Clients"). */
export interface RetryOptions {
  /** Attempts in all, the first included. Default 4. */
  maxAttempts: number;
  /** The first backoff when the service gives no Retry-After; doubled each attempt. Default 200 ms. */
  baseDelayMs: number;
  /** The longest backoff. Default 5000 ms. */
  maxDelayMs: number;
  /** A Retry-After longer than this is not waited for: the error is returned at once. Default 60 s. */
  maxRetryAfterSeconds: number;
}

export const DEFAULT_RETRY: RetryOptions = {
  maxAttempts: 4,
  baseDelayMs: 200,
  maxDelayMs: 5_000,
  maxRetryAfterSeconds: 60,
};

/** What came back from an attempt: a status, its Retry-After and error code, or no response at all. */
export type Outcome = { status: number; retryAfter: string | null; code?: string } | { status: "network_error" };

/** Statuses worth another attempt: the limit (429) and the service or its path being briefly unavailable. */
const RETRIED = new Set([429, 502, 503, 504]);

/** Retry-After as delay-seconds or an HTTP date, in ms from `now`; undefined when absent or unreadable. */
export function retryAfterMs(value: string | null, now: number): number | undefined {
  if (value === null) return undefined;
  if (/^[0-9]+$/.test(value.trim())) return Number(value.trim()) * 1000;
  const date = Date.parse(value);
  return Number.isNaN(date) ? undefined : Math.max(0, date - now);
}

/**
 * How long to wait before attempt `attempt + 1`, or undefined to stop. 429,
 * 503 and a write's 409 `idempotency_key_in_flight` wait what Retry-After says; without it (and for 502, 504 and
 * network failures) the wait is exponential with full jitter, so many clients
 * do not come back in step. No other 4xx or 5xx is retried: asking again
 * would get the same answer.
 */
export function retryDelayMs(
  outcome: Outcome,
  attempt: number,
  options: RetryOptions,
  random: () => number,
  now: number,
): number | undefined {
  if (attempt >= options.maxAttempts) return undefined;
  // A write whose first attempt is still running answers 409 idempotency_key_in_flight: its answer comes after.
  const inFlight = outcome.status === 409 && outcome.code === "idempotency_key_in_flight";
  if (outcome.status !== "network_error" && !RETRIED.has(outcome.status) && !inFlight) return undefined;
  const told = outcome.status === "network_error" ? undefined : retryAfterMs(outcome.retryAfter, now);
  if (told !== undefined) return told <= options.maxRetryAfterSeconds * 1000 ? told : undefined;
  return Math.floor(random() * Math.min(options.maxDelayMs, options.baseDelayMs * 2 ** (attempt - 1)));
}
