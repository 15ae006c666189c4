/**
 * The test events an account may send to its webhook endpoints
 * (docs/api.md#webhook-endpoints): each POSTs to an endpoint's URL from
 * Cloudflare's addresses and tells the caller how the host answered, so
 * unbounded they would make the service a port prober and a relay. Counted
 * per account, in its Account: deleting an endpoint and
 * making it again, or spreading them over several, starts nothing over.
 */

/** Test events an account may send within TEST_EVENT_WINDOW_MS, across all its endpoints. */
export const TEST_EVENTS_PER_WINDOW = 10;
export const TEST_EVENT_WINDOW_MS = 60_000;

/**
 * Whether a test event at `now` is admitted, given the times of the earlier
 * ones: the times to keep, and, when refused, how long until the oldest of
 * the window leaves it.
 */
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
