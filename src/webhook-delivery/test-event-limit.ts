/**
 * The test events an endpoint may be sent (docs/api.md#webhook-endpoints):
 * each POSTs to the endpoint's URL from Cloudflare's addresses and tells the
 * caller how the host answered, so unbounded they would make the service a
 * port prober and a relay. Counted per endpoint, in its lane.
 */

/** Test events an endpoint may be sent within TEST_EVENT_WINDOW_MS. */
export const TEST_EVENTS_PER_WINDOW = 10;
export const TEST_EVENT_WINDOW_MS = 60_000;

/**
 * Whether a test event at `now` is admitted, given the times of the earlier
 * ones: the times to keep, and, when refused, how long until the oldest of
 * the window leaves it.
 */
export function admitTestEvent(earlier: readonly number[], now: number): { times: number[]; retryAfterMs: number | null } {
  const recent = earlier.filter((at) => at > now - TEST_EVENT_WINDOW_MS && at <= now).sort((a, b) => a - b);
  if (recent.length >= TEST_EVENTS_PER_WINDOW) return { times: recent, retryAfterMs: recent[recent.length - TEST_EVENTS_PER_WINDOW]! + TEST_EVENT_WINDOW_MS - now };
  return { times: [...recent, now], retryAfterMs: null };
}
