import { describe, expect, it } from "vitest";
import { sparkline, usageReport } from "../../scripts/lib/usage-report";

describe("the keys command's usage history", () => {
  it("draws a sparkline from zero to the largest count", () => {
    expect(sparkline([0, 1, 4, 8])).toBe("▁▂▅█");
    expect(sparkline([0, 0])).toBe("▁▁");
    expect(sparkline([])).toBe("");
  });

  it("prints the totals, the sparkline and one row per bucket", () => {
    const lines = usageReport({
      budget: "key_0123456789abcdef",
      granularity: "day",
      buckets: [
        { start: "2030-03-09T00:00:00.000Z", admitted: 0, refused: 0 },
        { start: "2030-03-10T00:00:00.000Z", admitted: 1200, refused: 35 },
      ],
    });
    expect(lines).toEqual([
      "Account key_0123456789abcdef, by day, 2030-03-09T00:00:00.000Z to 2030-03-10T00:00:00.000Z: 1200 admitted, 35 " +
        "refused.",
      "admitted ▁█",
      "",
      "start                     admitted  refused",
      "2030-03-09T00:00:00.000Z         0        0",
      "2030-03-10T00:00:00.000Z      1200       35",
    ]);
  });
});
