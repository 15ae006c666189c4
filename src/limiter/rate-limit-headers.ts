import type { HeaderName } from "../framework/header-catalogue";
import type { Verdict, WindowReport } from "./protocol";

/**
 * The rate-limit headers of one verdict: the X-RateLimit-* fields for the
 * window that matters most, and the IETF RateLimit fields for both windows.
 * During a ban nothing is left until the ban ends, whatever the windows say.
 */
export function rateLimitHeaders(verdict: Verdict): Partial<Record<HeaderName, string>> {
  const now = verdict.now / 1000;
  const banEnd = verdict.outcome === "banned" ? verdict.bannedUntil : undefined;
  const remaining = (window: WindowReport) => (banEnd === undefined ? window.remaining : 0);
  const reset = (window: WindowReport) => banEnd ?? window.reset;
  const secondsLeft = (window: WindowReport) => Math.max(0, Math.ceil(reset(window) - now));

  const reported = verdict[verdict.reported];
  const windows = [verdict.minute, verdict.day];
  const headers: Partial<Record<HeaderName, string>> = {
    "X-RateLimit-Limit": String(reported.limit),
    "X-RateLimit-Remaining": String(remaining(reported)),
    "X-RateLimit-Reset": String(reset(reported)),
    "X-RateLimit-Resource": reported.name,
    "RateLimit-Policy": windows.map((w) => `"${w.name}";q=${w.limit};w=${w.size}`).join(", "),
    RateLimit: windows.map((w) => `"${w.name}";r=${remaining(w)};t=${secondsLeft(w)}`).join(", "),
  };
  if (verdict.retryAfter !== undefined) headers["Retry-After"] = String(verdict.retryAfter);
  return headers;
}
