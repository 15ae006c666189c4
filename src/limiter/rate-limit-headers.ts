import type { HeaderName } from "../framework/header-catalogue";
import type { Verdict } from "./protocol";

/**
 * The rate-limit headers of one verdict: the X-RateLimit-* fields for the
 * window that matters most, and the IETF RateLimit fields for both windows.
 * During a ban nothing is left until the ban ends, whatever the windows say.
 * Written out field by field, with no closure or array: every response pays
 * for this, a refused one most of all (docs/design/performance.md#what-the-floors-show).
 */
export function rateLimitHeaders(verdict: Verdict): Partial<Record<HeaderName, string>> {
  const { minute, day } = verdict;
  const reported = verdict[verdict.reported];
  const banEnd = verdict.outcome === "banned" ? verdict.bannedUntil : undefined;
  const banned = banEnd !== undefined;
  const nowSeconds = verdict.now / 1000;
  const headers: Partial<Record<HeaderName, string>> = {
    "X-RateLimit-Limit": String(reported.limit),
    "X-RateLimit-Remaining": banned ? "0" : String(reported.remaining),
    "X-RateLimit-Reset": String(banEnd ?? reported.reset),
    "X-RateLimit-Resource": reported.name,
    "RateLimit-Policy": `"${minute.name}";q=${minute.limit};w=${minute.size}, "${day.name}";q=${day.limit};w=${day.size}`,
    RateLimit: `"${minute.name}";r=${banned ? 0 : minute.remaining};t=${secondsLeft(banEnd ?? minute.reset, nowSeconds)}, "${day.name}";r=${banned ? 0 : day.remaining};t=${secondsLeft(banEnd ?? day.reset, nowSeconds)}`,
  };
  if (verdict.retryAfter !== undefined) headers["Retry-After"] = String(verdict.retryAfter);
  return headers;
}

/** Whole seconds until `end` (a window's reset, or a ban's end during one). */
const secondsLeft = (end: number, nowSeconds: number): number => Math.max(0, Math.ceil(end - nowSeconds));
