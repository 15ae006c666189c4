/** When a failed delivery is tried again (docs/design/order-events.md#lanes). */

/** Seconds a `Retry-After` asks for (delta-seconds or an HTTP-date), or null when it asks for nothing readable. */
export function retryAfterSeconds(value: string | null, now: number): number | null {
  if (value === null) return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * The wait after a failed attempt: the schedule's, or longer when a 429 or 503 asks with `Retry-After`, never past the
 * schedule's whole span.
 */
export function nextDelaySeconds(
  schedule: readonly number[],
  step: number,
  status: number | null,
  retryAfter: number | null,
): number {
  const scheduled = schedule[Math.min(step, schedule.length) - 1]!;
  if ((status !== 429 && status !== 503) || retryAfter === null) return scheduled;
  const span = schedule.reduce((sum, seconds) => sum + seconds, 0);
  return Math.max(scheduled, Math.min(retryAfter, span));
}
