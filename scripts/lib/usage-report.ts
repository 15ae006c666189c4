/**
 * `npm run keys -- usage <keyId> --history`: an account's usage history as a
 * table, with a sparkline of the admitted counts, for a terminal.
 */

export interface UsageHistoryAnswer {
  budget: string;
  granularity: string;
  buckets: { start: string; admitted: number; refused: number }[];
}

const BARS = "▁▂▃▄▅▆▇█";

/** One character per value, from the lowest bar (zero) to the highest (the largest value). */
export function sparkline(values: readonly number[]): string {
  const top = Math.max(0, ...values);
  return values
    .map((value) =>
      top === 0 || value <= 0 ? BARS[0] : BARS[Math.min(BARS.length - 1, Math.ceil((value / top) * (BARS.length - 1)))],
    )
    .join("");
}

/** The answer as lines: a heading with the totals and the sparkline, then one row per bucket. */
export function usageReport(history: UsageHistoryAnswer): string[] {
  const admitted = history.buckets.reduce((sum, bucket) => sum + bucket.admitted, 0);
  const refused = history.buckets.reduce((sum, bucket) => sum + bucket.refused, 0);
  const first = history.buckets[0]?.start ?? "";
  const last = history.buckets.at(-1)?.start ?? "";
  const width = Math.max(8, ...history.buckets.map((bucket) => String(bucket.admitted).length));
  return [
    `Account ${history.budget}, by ${history.granularity}, ${first} to ${last}: ${admitted} admitted, ${refused} ` +
      `refused.`,
    `admitted ${sparkline(history.buckets.map((bucket) => bucket.admitted))}`,
    "",
    `${"start".padEnd(24)}  ${"admitted".padStart(width)}  refused`,
    ...history.buckets.map(
      (bucket) =>
        `${bucket.start.padEnd(24)}  ${String(bucket.admitted).padStart(width)}  ${String(bucket.refused).padStart(7)}`,
    ),
  ];
}
