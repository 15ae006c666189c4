/**
 * How fast one endpoint's lane starts deliveries (docs/design/order-events.md#lanes):
 * at most LANE_CONCURRENCY in flight (the connections one invocation may
 * hold open), and, when its owner set a `rateLimit`, starts spaced so that
 * no second sees more than that many. Deliveries beyond either wait their
 * turn; none is dropped.
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
