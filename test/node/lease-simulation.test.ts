import { describe, expect, it, vi } from "vitest";
import { BAN, TIMEOUT_MS, everyWindow, scenarioFor, seeds, simulate, wanted } from "../support/lease-simulation";

/**
 * Properties of the lease rules over thousands of seeded runs
 * (docs/design/rate-limits.md#leases): limits, efficiency, the object's calls.
 * Bans, deaths, lost answers and skewed clocks are in
 * lease-simulation-faults.test.ts (two files, so the node project runs them
 * side by side). A failing seed is printed; `simulate(scenarioFor(seed, ...))`
 * replays it exactly. `npm run stress` runs many more seeds.
 */
vi.setConfig({ testTimeout: TIMEOUT_MS });

describe("leases, simulated", () => {
  it("never admit more than the limit in any minute or day window, whatever the isolates, deaths, demand or limit changes", () => {
    for (const seed of seeds(1)) {
      for (const demand of ["below", "above"] as const) {
        const result = simulate(
          scenarioFor(seed, demand, {
            deaths: seed % 2 === 0,
            limitChange: seed % 3 === 0,
            ban: seed % 5 === 0 ? BAN : undefined,
          }),
        );
        for (const window of everyWindow(result)) {
          if (window.admitted > window.maxLimit)
            expect.fail(`seed ${seed} ${demand}: ${window.admitted} admitted against ${window.maxLimit}`);
        }
      }
    }
  });

  it("refuse nothing while demand stays steadily below the limit", () => {
    // Efficiency, not safety: half the seeds of the safety properties (500 in npm test, 10,000 in npm run stress).
    for (const seed of seeds(2, 0.5)) {
      const result = simulate(scenarioFor(seed, "below", { deaths: seed % 2 === 0 }));
      const refused = everyWindow(result).reduce((sum, window) => sum + window.refused, 0);
      if (refused > 0) expect.fail(`seed ${seed}: ${refused} refused`);
    }
  });

  it("admit at least 95% of the limit in every minute while demand is above it", () => {
    for (const seed of seeds(3, 0.5)) {
      const result = simulate(scenarioFor(seed, "above"));
      for (const [start, minute] of result.minutes) {
        if (minute.whole && minute.admitted < 0.95 * wanted(minute)) {
          expect.fail(
            `seed ${seed}, minute ${start}: ${minute.admitted} of ${minute.maxLimit} with ` +
              `${result.scenario.isolates} ` +
              `` +
              `` +
              `isolates`,
          );
        }
      }
    }
  });

  it("call the object far less than once per request for a busy caller", () => {
    const scenario = {
      ...scenarioFor(11, "below", { isolates: 4 }),
      limits: { perMinute: 10_000, perDay: 10_000_000 },
    };
    const result = simulate(scenario);
    expect(result.admitted).toBeGreaterThan(10_000);
    expect(result.objectCalls / result.admitted).toBeLessThan(0.1);
  });
});
