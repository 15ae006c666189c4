/** When the dispatcher runs its passes (docs/design/order-events.md#dispatch): rules a simulation holds to bounds. */
import { backoffMs } from "../lib/backoff";

/** While endpoints exist and nothing was handed lately, how often the dispatcher looks for other systems' events. */
export const DISPATCH_POLL_MS = 1_000;

/** The least time between a pass and one a nudge brings forward, so a stream of cancels reaches lanes in batches. */
export const NUDGE_GAP_MS = 250;

/** How long after a pass that handed events the dispatcher looks every NUDGE_GAP_MS (other systems nudge nobody). */
export const BUSY_FOR_MS = 10_000;

/**
 * When a nudge wants the next pass: NUDGE_GAP_MS after the last began, if sooner than the one due; undefined: leave the
 * alarm. A dispatcher with nothing due runs one only while it watches.
 */
export function nudgedPassAt(
  due: number | null,
  watching: boolean,
  lastPassAt: number,
  now: number,
): number | undefined {
  const at = Math.max(now, lastPassAt + NUDGE_GAP_MS);
  return (due === null ? watching : due > at) ? at : undefined;
}

/** After a pass begun at `now`: when events were last handed, and the next pass (null: no endpoint, it sleeps). */
export function afterPass(
  pass: { more: boolean; endpoints: number; enqueued: number },
  now: number,
  lastHandedAt: number,
): { lastHandedAt: number; next: number | null } {
  const handedAt = pass.enqueued > 0 ? now : lastHandedAt;
  const pace = now - handedAt < BUSY_FOR_MS ? NUDGE_GAP_MS : DISPATCH_POLL_MS;
  return { lastHandedAt: handedAt, next: pass.more ? now : pass.endpoints === 0 ? null : now + pace };
}

/** The alarm a pass sets as it ends: none when a nudge during it (none is set while it runs) set one as soon. */
export const alarmAfterPass = (next: number | null, nudged: number | null): number | undefined =>
  next === null || (nudged !== null && nudged <= next) ? undefined : next;

/** The longest wait before a pass that failed is tried again: bounds how late delivery resumes after an outage. */
export const FAILED_PASS_RETRY_MAX_MS = 10_000;

/** The wait after the `failed`th pass in a row failed: 1, 2, 4, 8 s, then FAILED_PASS_RETRY_MAX_MS. */
export const failedPassRetryMs = (failed: number) => backoffMs(failed, FAILED_PASS_RETRY_MAX_MS, DISPATCH_POLL_MS);
