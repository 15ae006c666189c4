import { describe, expect, it } from "vitest";
import { backoffMs } from "../../../src/lib/backoff";

describe("backoff", () => {
  it("doubles from the first wait and stops at the most", () => {
    expect([1, 2, 3, 4, 5, 6].map((attempt) => backoffMs(attempt, 10_000))).toEqual([
      1_000, 2_000, 4_000, 8_000, 10_000, 10_000,
    ]);
    expect([1, 2, 3].map((attempt) => backoffMs(attempt, 60_000, 250))).toEqual([250, 500, 1_000]);
  });

  it("takes an attempt below 1 as the first", () => {
    expect(backoffMs(0, 10_000)).toBe(1_000);
  });
});
