/**
 * Exponential backoff: the wait before the `attempt`th retry in a row (1 for the first), doubling from `firstMs` and
 * never above `maxMs`, so how late work resumes after an outage is bounded.
 */
export const backoffMs = (attempt: number, maxMs: number, firstMs = 1_000): number =>
  Math.min(maxMs, firstMs * 2 ** (Math.max(1, attempt) - 1));
