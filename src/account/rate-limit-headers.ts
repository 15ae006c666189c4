import type { HeaderName } from "../framework/header-catalogue";
import type { Verdict, WindowReport } from "./protocol";

export type RateLimitHeaders = Readonly<Partial<Record<HeaderName, string>>>;

/**
 * A refusal's headers as last written, and the values they came from: a caller refused here is refused from the same
 * windows until the object answers again, so a refusal in a state already written builds no headers.
 */
export interface WrittenHeaders {
  day: WindowReport;
  outcome: Verdict["outcome"];
  reported: Verdict["reported"];
  retryAfter: number | undefined;
  banEnd: number | undefined;
  minuteLeft: number;
  dayLeft: number;
  headers: RateLimitHeaders;
}

/** One window in a RateLimit-Policy field: its name, quota and size. */
const policyOf = (window: WindowReport) => `"${window.name}";q=${window.limit};w=${window.size}`;

/** Refusals' headers keyed by the minute window, so an entry lives as long as its answer; one per isolate. */
export type WrittenHeadersByWindow = WeakMap<WindowReport, WrittenHeaders>;

/**
 * The rate-limit headers of one verdict: X-RateLimit-* for the window that matters most, the IETF RateLimit fields for
 * both; nothing left during a ban. A refusal's are written once per state and shared: read-only.
 */
export function rateLimitHeaders(verdict: Verdict, writtenRefusals: WrittenHeadersByWindow): RateLimitHeaders {
  const { minute, day, outcome, reported, retryAfter } = verdict;
  const banEnd = outcome === "banned" ? verdict.bannedUntil : undefined;
  const nowSeconds = verdict.now / 1000;
  const minuteLeft = secondsLeft(banEnd ?? minute.reset, nowSeconds);
  const dayLeft = secondsLeft(banEnd ?? day.reset, nowSeconds);
  // An admission's remaining count changes with every request: nothing to reuse.
  if (outcome === "admitted") return headersOf(verdict, banEnd, minuteLeft, dayLeft);
  const written = writtenRefusals.get(minute);
  if (
    written?.day === day &&
    written.outcome === outcome &&
    written.reported === reported &&
    written.retryAfter === retryAfter &&
    written.banEnd === banEnd &&
    written.minuteLeft === minuteLeft &&
    written.dayLeft === dayLeft
  ) {
    return written.headers;
  }
  const headers = headersOf(verdict, banEnd, minuteLeft, dayLeft);
  writtenRefusals.set(minute, { day, outcome, reported, retryAfter, banEnd, minuteLeft, dayLeft, headers });
  return headers;
}

/** Written out field by field, with no closure or array: every response pays for this. */
function headersOf(
  verdict: Verdict,
  banEnd: number | undefined,
  minuteLeft: number,
  dayLeft: number,
): RateLimitHeaders {
  const { minute, day } = verdict;
  const reported = verdict[verdict.reported];
  const banned = banEnd !== undefined;
  const headers: Partial<Record<HeaderName, string>> = {
    "X-RateLimit-Limit": String(reported.limit),
    "X-RateLimit-Remaining": banned ? "0" : String(reported.remaining),
    "X-RateLimit-Reset": String(banEnd ?? reported.reset),
    "X-RateLimit-Resource": reported.name,
    "RateLimit-Policy": `${policyOf(minute)}, ${policyOf(day)}`,
    RateLimit:
      `"${minute.name}";r=${banned ? 0 : minute.remaining};t=${minuteLeft}, ` +
      `"${day.name}";r=${banned ? 0 : day.remaining};t=${dayLeft}`,
  };
  if (verdict.retryAfter !== undefined) headers["Retry-After"] = String(verdict.retryAfter);
  return headers;
}

/** Whole seconds until `end` (a window's reset, or a ban's end during one). */
const secondsLeft = (end: number, nowSeconds: number): number => Math.max(0, Math.ceil(end - nowSeconds));
