/** A delivery's attempts (docs/api.md#webhook-endpoints), kept inline in it: an attempt costs no row of its own. */

/** One POST: when (Unix ms), the answer's status, how long it took, the answer's start, and what went wrong. */
export type LaneAttempt = [
  at: number,
  status: number | null,
  durationMs: number,
  response: string | null,
  error: string | null,
];

/** Attempts a delivery keeps, the newest: a schedule's ten and an owner's retries. */
export const ATTEMPTS_KEPT = 20;

export const withAttempt = (log: readonly LaneAttempt[], attempt: LaneAttempt): LaneAttempt[] =>
  [...log, attempt].slice(-ATTEMPTS_KEPT);

export const tookIt = (attempt: LaneAttempt) => attempt[1] !== null && attempt[1] >= 200 && attempt[1] < 300;

export const attemptJson = ([at, status, durationMs, response, error]: LaneAttempt) => ({
  at: new Date(at).toISOString(),
  status,
  durationMs,
  response,
  error,
});
