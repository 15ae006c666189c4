import { describe, expect, it } from "vitest";
import { DEFAULT_ORDER_EVENTS_BUDGET_MB } from "../../../src/framework/read-config";
import {
  EVENT_RETENTION_MS,
  EVENT_ROW_BYTES,
  PRUNE_BATCH,
  PRUNE_BATCHES_PER_RUN,
  pruneBatches,
} from "../../../src/events/prune-order-events";

/**
 * The prune's rule (`pruneBatches`) over a month and a week of minutes at
 * the capacity table's rate (docs/design/order-events.md#capacity), a cron
 * run a minute: a month of rows is 52 million at 20 changes a second, far
 * more than a test can write to D1 (test/workers/events/prune-order-events
 * runs the same rule on D1 itself over a backlog of 230,000). Each seed
 * draws its rate, an hour's burst, and stretches when the cron did not run
 * or D1 failed part-way through a run. PRUNE_SIMULATION_RUNS in
 * `npm run stress` runs many more seeds.
 */
const RUNS = Number(process.env.PRUNE_SIMULATION_RUNS ?? 30);
/** A month takes about 90 ms; the limit allows ten times that, so a busy machine fails on the properties alone. */
const TIMEOUT_MS = Math.max(60_000, RUNS * 1_000);
const MINUTE = 60_000;
const MINUTES = 37 * 1_440;
const RETENTION_MINUTES = EVENT_RETENTION_MS / MINUTE;
const BUDGET_BYTES = DEFAULT_ORDER_EVENTS_BUDGET_MB * 2 ** 20;
const BUDGET_ROWS = Math.floor(BUDGET_BYTES / EVENT_ROW_BYTES);
/** The queries a run may make: the storage read, a look a batch and the last look, two statements a batch. */
const RUN_QUERIES = 1 + 3 * PRUNE_BATCHES_PER_RUN;

function random(seed: number) {
  let state = seed >>> 0;
  return () => {
    state = (state + 0x6d2b79f5) >>> 0;
    let t = state;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4_294_967_296;
  };
}

interface Stretch {
  from: number;
  minutes: number;
}

interface Scenario {
  seed: number;
  /** Changes a second, before each minute's ±10%. */
  rate: number;
  burst: Stretch & { factor: number };
  /** Minutes the cron did not run at all. */
  missed: Stretch[];
  /** Minutes whose run D1 failed after some batches (each batch is its own transaction). */
  failing: Stretch[];
}

function scenarioOf(seed: number, rate: number): Scenario {
  const next = random(seed);
  const stretch = (longest: number): Stretch => ({
    from: Math.floor(next() * MINUTES),
    minutes: 1 + Math.floor(next() * longest),
  });
  return {
    seed,
    rate,
    burst: { ...stretch(60), factor: 1 + next() * 4 },
    missed: Array.from({ length: Math.floor(next() * 3) }, () => stretch(1_440)),
    failing: Array.from({ length: Math.floor(next() * 3) }, () => stretch(240)),
  };
}

const within = (minute: number, stretches: Stretch[]) =>
  stretches.some(({ from, minutes }) => minute >= from && minute < from + minutes);

interface MonthResult {
  /** The most queries any run made. */
  mostQueries: number;
  /** Each problem found, with its minute. */
  problems: string[];
  /**
   * The feed's shortest reach (minutes back to its oldest event) once past the first 7 days, on minutes after a run
   * that caught up.
   */
  shortestReachMinutes: number;
  prunedRows: number;
}

/** Every minute: its changes written, then the cron's run (unless missed), through `pruneBatches` itself. */
async function simulateMonth(scenario: Scenario): Promise<MonthResult> {
  const next = random(scenario.seed ^ 0x5eed);
  // The events as runs of sequence numbers a minute: [minute, last seq of that minute].
  const minutes: [number, number][] = [];
  let head = 0;
  let prunedThrough = 0;
  const result: MonthResult = { mostQueries: 0, problems: [], shortestReachMinutes: Infinity, prunedRows: 0 };
  /** The index of the first minute for which `below` is false (the minutes are in order of both time and sequence). */
  const firstNot = (below: (entry: [number, number]) => boolean) => {
    let low = 0;
    let high = minutes.length;
    while (low < high) {
      const middle = (low + high) >> 1;
      if (below(minutes[middle]!)) low = middle + 1;
      else high = middle;
    }
    return low;
  };
  /** The last event created before `minute`. */
  const lastBefore = (minute: number) => {
    const index = firstNot(([at]) => at < minute);
    return index === 0 ? 0 : minutes[index - 1]![1];
  };
  for (let minute = 0; minute < MINUTES; minute++) {
    const burst =
      minute >= scenario.burst.from && minute < scenario.burst.from + scenario.burst.minutes
        ? scenario.burst.factor
        : 1;
    head += Math.round(scenario.rate * 60 * burst * (0.9 + 0.2 * next()));
    minutes.push([minute, head]);
    if (within(minute, scenario.missed)) continue;

    // The run, at the minute's end: events created before the cutoff are past their retention.
    const cutoffMinute = minute + 1 - RETENTION_MINUTES;
    const oldest = lastBefore(cutoffMinute);
    const failAfter = within(minute, scenario.failing) ? Math.floor(next() * PRUNE_BATCHES_PER_RUN) : Infinity;
    let queries = 1;
    let removals = 0;
    const before = prunedThrough;
    let deleted = 0;
    try {
      deleted = await pruneBatches(
        { head, prunedThrough, budgetBytes: BUDGET_BYTES },
        {
          async oldThrough(from) {
            queries += 1;
            // SQL's look: the next PRUNE_BATCH events by sequence, the last of them created before the cutoff.
            return oldest > from ? Math.min(oldest, from + PRUNE_BATCH, head) : null;
          },
          async remove(from, through) {
            queries += 2;
            if (removals++ >= failAfter) throw new Error("D1 failed");
            if (from !== prunedThrough)
              result.problems.push(`minute ${minute}: a batch from ${from}, the mark at ${prunedThrough}`);
            prunedThrough = Math.max(prunedThrough, through);
            return through - from;
          },
        },
      );
    } catch {
      // The batches before the failure are done; the next run goes on from the mark.
    }
    result.mostQueries = Math.max(result.mostQueries, queries);
    result.prunedRows += prunedThrough - before;
    if (deleted !== 0 && deleted !== prunedThrough - before)
      result.problems.push(`minute ${minute}: counted ${deleted}, pruned ${prunedThrough - before}`);
    if (queries > RUN_QUERIES) result.problems.push(`minute ${minute}: ${queries} queries`);
    // Never more than the rules allow: only what is past its retention or over the budget.
    const mayGo = Math.max(oldest, head - BUDGET_ROWS);
    if (prunedThrough > mayGo)
      result.problems.push(`minute ${minute}: pruned through ${prunedThrough}, only ${mayGo} might go`);
    // A run that stopped short of its cap, with D1 answering, has caught up: under budget, nothing past its retention.
    const caughtUp = removals < PRUNE_BATCHES_PER_RUN && failAfter === Infinity;
    if (caughtUp) {
      if (head - prunedThrough > BUDGET_ROWS)
        result.problems.push(`minute ${minute}: ${head - prunedThrough} kept, over the budget's ${BUDGET_ROWS}`);
      if (oldest > prunedThrough)
        result.problems.push(`minute ${minute}: events through ${oldest} past their retention are kept`);
      if (minute >= 7 * 1_440) {
        const oldestKept = minutes[firstNot(([, last]) => last <= prunedThrough)]?.[0] ?? minute;
        result.shortestReachMinutes = Math.min(result.shortestReachMinutes, minute - oldestKept);
      }
    }
  }
  return result;
}

describe("the prune over a month of a busy store's events, simulated", () => {
  it(
    "at the capacity table's 20 changes a second, with a burst, missed crons and failing runs: bounded runs, nothing " +
      "kept past its rules, nothing pruned before them, and 7 days of feed",
    async () => {
      for (let i = 0; i < RUNS; i++) {
        const seed = (i + 1) * 104_729;
        // The goal's rate, less the ±10% a minute may add.
        const scenario = scenarioOf(seed, 18);
        const result = await simulateMonth(scenario);
        if (result.problems.length > 0) expect.fail(`seed ${seed}: ${result.problems.slice(0, 3).join("; ")}`);
        expect(result.mostQueries, `seed ${seed}`).toBeLessThanOrEqual(RUN_QUERIES);
        expect(result.shortestReachMinutes, `seed ${seed}`).toBeGreaterThanOrEqual(7 * 1_440);
      }
    },
    TIMEOUT_MS,
  );

  it("past the capacity (60 changes a second): the runs stay bounded and the budget holds; the feed reaches back less far", async () => {
    const result = await simulateMonth(scenarioOf(7, 60));
    expect(result.problems).toEqual([]);
    expect(result.mostQueries).toBeLessThanOrEqual(RUN_QUERIES);
    // The budget's rows at 60 a second, about 2.6 days, less a minute's rows and the missed stretch caught up.
    expect(result.shortestReachMinutes).toBeGreaterThan(2 * 1_440);
    expect(result.shortestReachMinutes).toBeLessThan(3 * 1_440);
  }, 60_000);
});
