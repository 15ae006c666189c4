/**
 * How fast a lane starts deliveries: LANE_CONCURRENCY in flight at most, spaced to the owner's `rateLimit` a second;
 * the rest wait their turn.
 */

/** POSTs one lane has in flight at most: Workers allow six open connections per invocation. */
export const LANE_CONCURRENCY = 6;

/** When the next start may be, after one at `startedAt`, for a rate of `perSecond` (null: no limit). */
export function nextStartAfter(startedAt: number, perSecond: number | null): number {
  return perSecond === null ? startedAt : startedAt + Math.ceil(1000 / perSecond);
}

/** How long to wait before starting another at `now`: 0 when it may start now. */
export function waitBeforeStart(
  now: number,
  nextStartAt: number,
  inFlight: number,
  concurrency = LANE_CONCURRENCY,
): number | "full" {
  if (inFlight >= concurrency) return "full";
  return Math.max(0, nextStartAt - now);
}
