import { describe, expect, it } from "vitest";
import { acquire, type LimiterState } from "../../../src/account/policy";
import { ANONYMOUS_LIMITS, OPERATOR_LIMITS } from "../../../src/account/plans";

/**
 * A day of an operators' console page that reads every 2 s (the pipeline
 * view's poll), as the limiter's object decides it (docs/operations.md#operators-budgets):
 * on an operator's own budget never refused; on an address group's, which
 * is what every operator behind one office address was counted as, the
 * day ran out within an hour.
 */
function aDayOfPolling(limits: { perMinute: number; perDay: number }): {
  refused: number;
  firstRefusedAt: number | undefined;
} {
  const start = Date.UTC(2030, 0, 1);
  let state: LimiterState | undefined;
  let refused = 0;
  let firstRefusedAt: number | undefined;
  for (let at = start; at < start + 86_400_000; at += 2_000) {
    const result = acquire(
      state,
      { limits, ban: { threshold: 1_000_000, seconds: 900 }, want: 1, speculative: false },
      at,
    );
    state = result.state;
    if (result.verdict.outcome !== "admitted") {
      refused += 1;
      firstRefusedAt ??= (at - start) / 60_000;
    }
  }
  return { refused, firstRefusedAt };
}

describe("an operator's budget", () => {
  it("admits a page polling every 2 s all day, 43,200 requests", () => {
    expect(aDayOfPolling(OPERATOR_LIMITS)).toEqual({ refused: 0, firstRefusedAt: undefined });
  });

  it("where an address group's budget ran out of its day in about 33 minutes", () => {
    const { refused, firstRefusedAt } = aDayOfPolling(ANONYMOUS_LIMITS);
    expect(firstRefusedAt).toBeCloseTo(33.3, 0);
    expect(refused).toBe(43_200 - ANONYMOUS_LIMITS.perDay);
  });
});
