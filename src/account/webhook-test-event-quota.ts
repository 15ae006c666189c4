/**
 * The test events an account may send (docs/api.md#webhook-endpoints): each POSTs from Cloudflare's addresses and
 * reports the answer, so unbounded they would make a port prober. Counted per account, so re-making endpoints starts
 * nothing over.
 */

/** Test events an account may send within TEST_EVENT_WINDOW_MS, across all its endpoints. */
export const TEST_EVENTS_PER_WINDOW = 10;
export const TEST_EVENT_WINDOW_MS = 60_000;

/** Whether a test event at `now` is admitted: the times to keep, and when refused, the wait until one may. */
export function admitTestEvent(
  earlier: readonly number[],
  now: number,
): { times: number[]; retryAfterMs: number | null } {
  const recent = earlier.filter((at) => at > now - TEST_EVENT_WINDOW_MS && at <= now).sort((a, b) => a - b);
  if (recent.length >= TEST_EVENTS_PER_WINDOW)
    return {
      times: recent,
      retryAfterMs: recent[recent.length - TEST_EVENTS_PER_WINDOW]! + TEST_EVENT_WINDOW_MS - now,
    };
  return { times: [...recent, now], retryAfterMs: null };
}
