/** Exponential backoff: the wait before the `attempt`th retry, doubling from `firstMs`, capped at `maxMs`. */
export const backoffMs = (attempt: number, maxMs: number, firstMs = 1_000): number =>
  Math.min(maxMs, firstMs * 2 ** (Math.max(1, attempt) - 1));
