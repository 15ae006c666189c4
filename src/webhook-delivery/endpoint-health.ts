/**
 * An endpoint's delivery health as its lane notes it after each run (docs/api.md#failing-endpoints): since when it
 * fails and when it last succeeded, kept only in its row, written when that changes and at most every REFRESH_MS while
 * it delivers; and what a failing period calls for. A period is noted at its second failing run, from its first
 * failure: one refusal taken at its retry writes nothing. Plain rules; the lane does what they say.
 */
export const REFRESH_MS = 10 * 60_000;

export interface HealthNote {
  /** Unix ms; null while deliveries succeed. */
  failingSince: number | null;
  /** Unix ms, as last written: null before the first success. */
  lastDeliveredAt: number | null;
  /** The failing period (its failingSince) whose owner was told it fails; null or absent: none yet. */
  toldFailing?: number | null;
}

/** How long an endpoint fails before its owner is told, and before it is disabled (the WEBHOOK_* vars), ms. */
export interface HealthPeriods {
  failingAfterMs: number;
  disableAfterMs: number;
}

/** Failures the second half of a failing period must hold before disabling: one old failure says nothing of now. */
export const DISABLE_MIN_RECENT_FAILURES = 3;

/** Where the second half of a period failing since `failingSince` begins, at `now`. */
export const secondHalfFrom = (failingSince: number, now: number) =>
  failingSince + Math.floor((now - failingSince) / 2);

/**
 * What a failing period calls for at `now`: disabled once every attempt failed for disableAfterMs (Svix's rule); before
 * that its owner told once, after failingAfterMs; else nothing.
 */
export function failingVerdict(
  note: HealthNote,
  recentFailures: number,
  periods: HealthPeriods,
  now: number,
): "disable" | "tell failing" | "none" {
  if (note.failingSince === null) return "none";
  const failingFor = now - note.failingSince;
  if (failingFor >= periods.disableAfterMs && recentFailures >= DISABLE_MIN_RECENT_FAILURES) return "disable";
  if (failingFor >= periods.failingAfterMs && note.toldFailing !== note.failingSince) return "tell failing";
  return "none";
}

/** A failing period's start, for a run begun at `began` that failed: the first failure from `from` before it. */
export function periodStart(failures: readonly number[], from: number, began: number): number | null {
  let first: number | null = null;
  for (const at of failures) if (at >= from && at < began && (first === null || at < first)) first = at;
  return first;
}

/** The note after a run that POSTed `sent`, `delivered` taken (`failingFrom`: periodStart); whether to write it. */
export function nextHealth(
  previous: HealthNote,
  run: { delivered: number; sent: number; failingFrom: number | null },
  now: number,
): { note: HealthNote; write: boolean } {
  // Nothing sent: the receiver was not asked, so nothing changed.
  if (run.sent === 0) return { note: previous, write: false };
  if (run.delivered > 0) {
    const { failingSince, lastDeliveredAt } = previous;
    const write = failingSince !== null || lastDeliveredAt === null || now - lastDeliveredAt >= REFRESH_MS;
    return { note: { failingSince: null, lastDeliveredAt: write ? now : lastDeliveredAt, toldFailing: null }, write };
  }
  if (previous.failingSince !== null || run.failingFrom === null) return { note: previous, write: false };
  return { note: { ...previous, failingSince: run.failingFrom }, write: true };
}
