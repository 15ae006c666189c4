import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import {
  BUSY_FOR_MS,
  DISPATCH_POLL_MS,
  NUDGE_GAP_MS,
  nextPassAt,
  nudgedPassAt,
} from "../../../src/webhook-delivery/dispatch-schedule";
import { seedProperties } from "../../support/property-seed";

/**
 * The dispatcher's schedule (docs/design/order-events.md#dispatch), over seeded streams of writes through the API
 * (which nudge it) and by other systems (which nudge nobody), with an endpoint to watch throughout. The rules under
 * test are the object's own (nextPassAt, nudgedPassAt); the alarm around them is a model, which runs a pass due
 * before a write at the same millisecond, so that write waits for the next one. The seed is printed on a failure and
 * taken from FC_SEED when set.
 */
seedProperties(process.env.FC_SEED);

interface Write {
  /** Since the write before. */
  gapMs: number;
  api: boolean;
}

const write: fc.Arbitrary<Write> = fc.record({
  gapMs: fc.oneof(fc.nat(NUDGE_GAP_MS * 2), fc.nat(BUSY_FOR_MS * 2)),
  api: fc.boolean(),
});

interface Written {
  at: number;
  api: boolean;
  /** When the last pass that handed events before it began. */
  handedBefore: number;
  /** When a pass handed it. */
  handedAt?: number;
}

interface Pass {
  at: number;
  /** It handed nothing, more than BUSY_FOR_MS after the last pass that handed events: the slow pace's condition. */
  quiet: boolean;
}

/** The alarm's model: each pass hands what was written before it and schedules the next by the rules. */
function simulate(writes: readonly Write[]): { written: Written[]; passes: Pass[] } {
  const written: Written[] = [];
  const passes: Pass[] = [];
  let due: number | null = 0;
  let lastPassAt = 0;
  let lastHandedAt = -Infinity;
  let clock = 0;
  const passesUntil = (until: number) => {
    while (due !== null && due <= until) {
      const at: number = due;
      lastPassAt = at;
      const handed = written.filter((one) => one.handedAt === undefined);
      for (const one of handed) one.handedAt = at;
      if (handed.length > 0) lastHandedAt = at;
      passes.push({ at, quiet: at - lastHandedAt >= BUSY_FOR_MS });
      due = nextPassAt({ more: false, endpoints: 1 }, at, lastHandedAt);
    }
  };
  for (const { gapMs, api } of writes) {
    clock += gapMs;
    passesUntil(clock);
    written.push({ at: clock, api, handedBefore: lastHandedAt });
    if (api) due = nudgedPassAt(due, true, lastPassAt, clock) ?? due;
  }
  passesUntil(clock + DISPATCH_POLL_MS);
  return { written, passes };
}

describe("the dispatcher's schedule, simulated", () => {
  test.prop([fc.array(write, { minLength: 1, maxLength: 200 })], { numRuns: 3_000 })(
    "hands every write within DISPATCH_POLL_MS, and within NUDGE_GAP_MS an API write or one in a busy stretch",
    (writes) => {
      for (const one of simulate(writes).written) {
        const waited = one.handedAt! - one.at;
        expect(waited).toBeGreaterThanOrEqual(0);
        expect(waited).toBeLessThanOrEqual(DISPATCH_POLL_MS);
        if (one.api || one.at - one.handedBefore < BUSY_FOR_MS) expect(waited).toBeLessThanOrEqual(NUDGE_GAP_MS);
      }
    },
  );

  test.prop([fc.array(write, { minLength: 1, maxLength: 200 })], { numRuns: 3_000 })(
    "never runs passes closer than NUDGE_GAP_MS, and keeps its slow pace once a quiet BUSY_FOR_MS has passed",
    (writes) => {
      const { written, passes } = simulate(writes);
      for (let i = 1; i < passes.length; i++) {
        const [before, pass] = [passes[i - 1]!, passes[i]!];
        expect(pass.at - before.at).toBeGreaterThanOrEqual(NUDGE_GAP_MS);
        // A quiet pass's next comes a poll later, unless an API write in between nudged it forward.
        const nudged = written.some((one) => one.api && one.at >= before.at && one.at <= pass.at);
        if (before.quiet && !nudged) expect(pass.at - before.at).toBe(DISPATCH_POLL_MS);
      }
    },
  );
});

describe("the pass after a pass", () => {
  it("runs at once after a full pass, and never while no endpoint is enabled", () => {
    expect(nextPassAt({ more: true, endpoints: 3 }, 5_000, -Infinity)).toBe(5_000);
    expect(nextPassAt({ more: false, endpoints: 0 }, 5_000, 4_000)).toBeNull();
    expect(nextPassAt({ more: false, endpoints: 3 }, 5_000, 5_000 - BUSY_FOR_MS)).toBe(5_000 + DISPATCH_POLL_MS);
    expect(nextPassAt({ more: false, endpoints: 3 }, 5_000, 5_000 - BUSY_FOR_MS + 1)).toBe(5_000 + NUDGE_GAP_MS);
  });
});
