import { describe, expect, it, vi } from "vitest";
import { refusalBatch } from "../../src/account/lease-book";
import { BAN, RUNS, TIMEOUT_MS, everyWindow, scenarioFor, seeds, simulate, wanted } from "../support/lease-simulation";

/**
 * Properties of the lease rules when things go wrong, over thousands of
 * seeded runs (docs/design/rate-limits.md#leases): bans, isolate deaths, an
 * object that loses answers, skewed clocks. A failing seed is printed;
 * `simulate(scenarioFor(seed, ...))` replays it exactly.
 */
vi.setConfig({ testTimeout: TIMEOUT_MS });

describe("leases, simulated, when things go wrong", () => {
  it("lose no more than the dead isolates' unspent leases when isolates die", () => {
    for (const seed of seeds(4)) {
      const result = simulate(scenarioFor(seed, "above", { deaths: true }));
      for (const [start, minute] of result.minutes) {
        if (minute.whole && minute.admitted + minute.lostToDeaths < 0.95 * wanted(minute)) {
          expect.fail(
            `seed ${seed}, minute ${start}: ${minute.admitted} admitted, ${minute.lostToDeaths} lost, limit ` +
              `${minute.maxLimit}`,
          );
        }
      }
    }
  });

  it("start a ban never early, exactly on time in one isolate, at most two batches late per other isolate, and make it known within a batch, for the threshold of every environment and a wider one", () => {
    const bans = { 20: 0, 60: 0 };
    for (const seed of seeds(5)) {
      // A threshold of 60 sends refusals in batches of 30 (half of it): the bound scales with the batch.
      const ban = seed % 2 === 0 ? BAN : { ...BAN, threshold: 60 };
      const batch = refusalBatch(ban);
      const result = simulate(scenarioFor(seed, "above", { ban }));
      const { isolates } = result.scenario;
      if (result.limitedBeforeBan === undefined) continue;
      bans[ban.threshold as 20 | 60] += 1;
      const late = result.limitedBeforeBan - ban.threshold;
      // Per other isolate: a batch not sent yet, and one whose refusals an admission elsewhere interrupted.
      if (late < 0 || late > (isolates - 1) * 2 * batch || (isolates === 1 && late !== 0)) {
        expect.fail(
          `seed ${seed}: the object banned after ${result.limitedBeforeBan} refusals in a row (threshold ` +
            `${ban.threshold}), with ${isolates} isolates`,
        );
      }
      if (result.limitedDuringBan > isolates * batch) {
        expect.fail(
          `seed ${seed}: ${result.limitedDuringBan} answered "limited" during the ban (threshold ${ban.threshold}), ` +
            `with ${isolates} isolates`,
        );
      }
    }
    expect(bans[20]).toBeGreaterThan(RUNS / 4);
    expect(bans[60]).toBeGreaterThan(RUNS / 8);
  });

  it("with an object that loses a fifth of its calls or answers, and retries that arrive up to 3 s late (past minute and day boundaries), admit no more than the limit in any window, stranded grants included, and ban no caller that was not answered 429 BAN_THRESHOLD times", () => {
    let bans = 0;
    for (const seed of seeds(6)) {
      for (const demand of ["below", "above"] as const) {
        const result = simulate(
          scenarioFor(seed, demand, { ban: BAN, lossRate: 0.2, retryDelayMs: 3_000, deaths: seed % 2 === 0 }),
        );
        for (const window of everyWindow(result)) {
          if (window.admitted + window.stranded > window.maxLimit) {
            expect.fail(
              `seed ${seed} ${demand}: ${window.admitted} admitted and ${window.stranded} stranded against ` +
                `${window.maxLimit}`,
            );
          }
        }
        if (result.limitedBeforeBan === undefined) continue;
        bans += 1;
        if (result.limitedBeforeBan < BAN.threshold) {
          expect.fail(
            `seed ${seed} ${demand}: banned after ${result.limitedBeforeBan} 429s in a row (${result.unavailable} ` +
              `answered 503)`,
          );
        }
      }
    }
    expect(bans).toBeGreaterThan(RUNS / 2);
  });

  it("with isolate clocks up to 2 s off the object's, never admit more than the limit in any of the object's windows", () => {
    for (const seed of seeds(7)) {
      const result = simulate(
        scenarioFor(seed, "above", { skewMs: 2_000, deaths: seed % 2 === 0, limitChange: seed % 3 === 0 }),
      );
      for (const window of everyWindow(result)) {
        if (window.admitted > window.maxLimit)
          expect.fail(`seed ${seed}: ${window.admitted} admitted against ${window.maxLimit}, isolates skewed`);
      }
    }
  });

  it("keep a usage history that equals, minute by minute, the requests admitted and refused, but for what isolates held when they died (unspent leases count as admitted, unreported refusals are missing)", () => {
    let refusals = 0;
    for (const seed of seeds(8)) {
      for (const demand of ["below", "above"] as const) {
        const result = simulate(
          scenarioFor(seed, demand, {
            ban: seed % 2 === 0 ? BAN : undefined,
            deaths: seed % 3 === 0,
            limitChange: seed % 5 === 0,
          }),
        );
        const minutes = new Set([...result.minutes.keys(), ...result.history.keys()]);
        for (const start of minutes) {
          const counted = result.minutes.get(start) ?? {
            admitted: 0,
            refused: 0,
            lostToDeaths: 0,
            refusalsLostToDeaths: 0,
          };
          const kept = result.history.get(start) ?? { admitted: 0, refused: 0 };
          refusals += counted.refused;
          if (
            kept.admitted !== counted.admitted + counted.lostToDeaths ||
            kept.refused !== counted.refused - counted.refusalsLostToDeaths
          ) {
            expect.fail(
              `seed ${seed} ${demand}, minute ${start}: history ${kept.admitted} admitted, ${kept.refused} refused; ` +
                `requests ${counted.admitted} admitted (${counted.lostToDeaths} lost to deaths), ${counted.refused} ` +
                `refused (${counted.refusalsLostToDeaths} unreported by the dead)`,
            );
          }
        }
      }
    }
    expect(refusals).toBeGreaterThan(RUNS);
  });
});
