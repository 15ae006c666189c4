/**
 * An endpoint's delivery health, as its lane notes it after each run and
 * writes it to its row for operators (docs/operations.md#the-operators-console):
 * since when its deliveries fail, and when one last succeeded. Written to D1
 * only when the state changes (failing, or delivering again) and, while it
 * delivers, at most every REFRESH_MS, so a busy endpoint costs a few writes
 * an hour, never one a delivery. A plain rule; the lane writes what it says.
 */
export const REFRESH_MS = 10 * 60_000;

export interface HealthNote {
  /** Unix ms; null while deliveries succeed. */
  failingSince: number | null;
  /** Unix ms; null before the first success. */
  lastDeliveredAt: number | null;
  /** When the row was last written (Unix ms). */
  writtenAt: number;
}

/**
 * The note after a run that POSTed `sent` deliveries, `delivered` of them accepted, at `now`, and whether the row must
 * be written.
 */
export function nextHealth(
  previous: HealthNote | undefined,
  run: { delivered: number; sent: number },
  now: number,
): { note: HealthNote; write: boolean } {
  const unchanged = previous ?? { failingSince: null, lastDeliveredAt: null, writtenAt: 0 };
  // Nothing sent (nothing due, or only events pruned before their turn): the receiver was not asked, so nothing
  // changed.
  if (run.sent === 0) return { note: unchanged, write: false };
  if (run.delivered > 0) {
    const write = previous === undefined || previous.failingSince !== null || now - previous.writtenAt >= REFRESH_MS;
    return { note: { failingSince: null, lastDeliveredAt: now, writtenAt: write ? now : unchanged.writtenAt }, write };
  }
  if (unchanged.failingSince !== null) return { note: unchanged, write: false };
  return { note: { ...unchanged, failingSince: now, writtenAt: now }, write: true };
}
