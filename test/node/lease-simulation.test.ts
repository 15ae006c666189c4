import { describe, expect, it, vi } from "vitest";
import { REFUSAL_BATCH } from "../../src/limiter/lease-book";
import { BAN, scenarioFor, simulate, type SimulationResult } from "../support/lease-simulation";

/**
 * Properties of the lease rules over thousands of seeded runs (README, "Rate
 * limits"). A failing seed is printed; `simulate(scenarioFor(seed, ...))`
 * replays it exactly. `npm run stress` runs many more seeds.
 */
const RUNS = Number(process.env.LEASE_SIMULATION_RUNS ?? 1000);
/**
 * A run takes about 10 ms here, two runs per seed at most; the limit allows
 * six times that, so `npm run stress` (20,000 seeds) passes or fails on the
 * properties alone, never on the clock.
 */
const TIMEOUT_MS = Math.max(60_000, RUNS * 2 * 10 * 6);
vi.setConfig({ testTimeout: TIMEOUT_MS });

/** The seeds of one property; long runs print their progress every tenth. */
function* seeds(salt: number): Generator<number> {
  for (let i = 0; i < RUNS; i++) {
    if (RUNS >= 10_000 && i > 0 && i % (RUNS / 10) === 0) process.stderr.write(`  simulation ${salt}: ${i} of ${RUNS} seeds\n`);
    yield (i + 1) * 7919 + salt;
  }
}

function everyWindow(result: SimulationResult) {
  return [...result.minutes.entries(), ...result.days.entries()].map(([start, ledger]) => ({ start, ...ledger }));
}

describe("leases, simulated", () => {
  it("never admit more than the limit in any minute or day window, whatever the isolates, deaths, demand or limit changes", () => {
    for (const seed of seeds(1)) {
      for (const demand of ["below", "above"] as const) {
        const result = simulate(scenarioFor(seed, demand, { deaths: seed % 2 === 0, limitChange: seed % 3 === 0, ban: seed % 5 === 0 ? BAN : undefined }));
        for (const window of everyWindow(result)) {
          if (window.admitted > window.maxLimit) expect.fail(`seed ${seed} ${demand}: ${window.admitted} admitted against ${window.maxLimit}`);
        }
      }
    }
  });

  it("refuse nothing while demand stays steadily below the limit", () => {
    for (const seed of seeds(2)) {
      const result = simulate(scenarioFor(seed, "below", { deaths: seed % 2 === 0 }));
      const refused = everyWindow(result).reduce((sum, window) => sum + window.refused, 0);
      if (refused > 0) expect.fail(`seed ${seed}: ${refused} refused`);
    }
  });

  // Random arrivals: a minute's demand can fall short of the limit, so the mark is 95% of what was asked, up to the limit.
  const wanted = (minute: { admitted: number; refused: number; maxLimit: number }) => Math.min(minute.maxLimit, minute.admitted + minute.refused);

  it("admit at least 95% of the limit in every minute while demand is above it", () => {
    for (const seed of seeds(3)) {
      const result = simulate(scenarioFor(seed, "above"));
      for (const [start, minute] of result.minutes) {
        if (minute.whole && minute.admitted < 0.95 * wanted(minute)) {
          expect.fail(`seed ${seed}, minute ${start}: ${minute.admitted} of ${minute.maxLimit} with ${result.scenario.isolates} isolates`);
        }
      }
    }
  });

  it("lose no more than the dead isolates' unspent leases when isolates die", () => {
    for (const seed of seeds(4)) {
      const result = simulate(scenarioFor(seed, "above", { deaths: true }));
      for (const [start, minute] of result.minutes) {
        if (minute.whole && minute.admitted + minute.lostToDeaths < 0.95 * wanted(minute)) {
          expect.fail(`seed ${seed}, minute ${start}: ${minute.admitted} admitted, ${minute.lostToDeaths} lost, limit ${minute.maxLimit}`);
        }
      }
    }
  });

  it("start a ban never early, exactly on time in one isolate, at most two batches late per other isolate, and make it known within a batch", () => {
    let bans = 0;
    for (const seed of seeds(5)) {
      const result = simulate(scenarioFor(seed, "above", { ban: BAN }));
      const { isolates } = result.scenario;
      if (result.limitedBeforeBan === undefined) continue;
      bans += 1;
      const late = result.limitedBeforeBan - BAN.threshold;
      // Per other isolate: a batch not sent yet, and one whose refusals an admission elsewhere interrupted.
      if (late < 0 || late > (isolates - 1) * 2 * REFUSAL_BATCH || (isolates === 1 && late !== 0)) {
        expect.fail(`seed ${seed}: the object banned after ${result.limitedBeforeBan} refusals in a row, with ${isolates} isolates`);
      }
      if (result.limitedDuringBan > isolates * REFUSAL_BATCH) {
        expect.fail(`seed ${seed}: ${result.limitedDuringBan} answered "limited" during the ban, with ${isolates} isolates`);
      }
    }
    expect(bans).toBeGreaterThan(RUNS / 2);
  });

  it("with an object that loses a fifth of its calls or answers, admit no more than the limit, stranded grants included, and ban no caller that was not answered 429 BAN_THRESHOLD times", () => {
    let bans = 0;
    for (const seed of seeds(6)) {
      for (const demand of ["below", "above"] as const) {
        const result = simulate(scenarioFor(seed, demand, { ban: BAN, lossRate: 0.2, deaths: seed % 2 === 0 }));
        for (const window of everyWindow(result)) {
          if (window.admitted + window.stranded > window.maxLimit) {
            expect.fail(`seed ${seed} ${demand}: ${window.admitted} admitted and ${window.stranded} stranded against ${window.maxLimit}`);
          }
        }
        if (result.limitedBeforeBan === undefined) continue;
        bans += 1;
        if (result.limitedBeforeBan < BAN.threshold) {
          expect.fail(`seed ${seed} ${demand}: banned after ${result.limitedBeforeBan} 429s in a row (${result.unavailable} answered 503)`);
        }
      }
    }
    expect(bans).toBeGreaterThan(RUNS / 2);
  });

  it("with isolate clocks up to 2 s off the object's, never admit more than the limit in any of the object's windows", () => {
    for (const seed of seeds(7)) {
      const result = simulate(scenarioFor(seed, "above", { skewMs: 2_000, deaths: seed % 2 === 0, limitChange: seed % 3 === 0 }));
      for (const window of everyWindow(result)) {
        if (window.admitted > window.maxLimit) expect.fail(`seed ${seed}: ${window.admitted} admitted against ${window.maxLimit}, isolates skewed`);
      }
    }
  });

  it("call the object far less than once per request for a busy caller", () => {
    const scenario = { ...scenarioFor(11, "below", { isolates: 4 }), limits: { perMinute: 10_000, perDay: 10_000_000 } };
    const result = simulate(scenario);
    expect(result.admitted).toBeGreaterThan(10_000);
    expect(result.objectCalls / result.admitted).toBeLessThan(0.1);
  });
});
