/**
 * One change to the budget's usage history (docs/design/rate-limits.md#usage-history):
 * admissions granted (or, negative, handed back unspent) and refusals, in the
 * minute and day they belong to. Summed, a settled minute's admitted count is
 * the requests admitted in it.
 */
export interface UsageChange {
  minuteStart: number;
  dayStart: number;
  admitted: number;
  refused: number;
}
