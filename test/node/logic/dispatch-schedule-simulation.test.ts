import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import {
  afterPass,
  alarmAfterPass,
  BUSY_FOR_MS,
  DISPATCH_POLL_MS,
  NUDGE_GAP_MS,
  nudgedPassAt,
} from "../../../src/webhook-delivery/dispatch-schedule";
import { seedProperties } from "../../support/property-seed";

/**
 * The dispatcher's schedule (docs/design/order-events.md#dispatch), over seeded streams of writes through the API
 * (which nudge it) and by other systems (which nudge nobody), passes of any length under the gap, and an endpoint to
 * watch throughout. The rules under test are the object's own (afterPass, alarmAfterPass, nudgedPassAt); the platform
 * around them is a model, which runs a pass due before a write at the same millisecond, so that write waits for the
 * next one. The seed is printed on a failure and taken from FC_SEED when set.
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

/** Each pass's length, shorter than the gap (a local D1 answers in milliseconds), taken in turn. */
const passLengths = fc.array(fc.nat(NUDGE_GAP_MS - 1), { minLength: 1, maxLength: 20 });

/**
 * The platform's model: the alarm fires a pass (and is no longer set while it runs), which hands what was written
 * before it; writes while it runs nudge as at any time; its end sets the next alarm by the rules.
 */
function simulate(writes: readonly Write[], lengths: readonly number[]): { written: Written[]; passes: Pass[] } {
  const written: Written[] = [];
  const passes: Pass[] = [];
  let alarm: number | null = 0;
  let running: { at: number; endsAt: number; handed: number } | undefined;
  let idleFrom = 0;
  let lastPassAt = 0;
  let lastHandedAt = -Infinity;
  let handedThrough = 0;
  /** Passes begun and ended by `until`; one due at a write's millisecond begins before it. */
  const passesUntil = (until: number) => {
    for (;;) {
      if (running !== undefined) {
        if (running.endsAt > until) return;
        const { at, endsAt, handed } = running;
        let next: number | null;
        ({ lastHandedAt, next } = afterPass({ more: false, endpoints: 1, enqueued: handed }, at, lastHandedAt));
        alarm = alarmAfterPass(next, alarm) ?? alarm;
        passes.push({ at, quiet: at - lastHandedAt >= BUSY_FOR_MS });
        running = undefined;
        idleFrom = endsAt;
        continue;
      }
      if (alarm === null || Math.max(alarm, idleFrom) > until) return;
      const at = Math.max(alarm, idleFrom);
      alarm = null;
      lastPassAt = at;
      // A pass hands every write before it, so those not handed yet are the newest.
      const handed = written.length - handedThrough;
      for (; handedThrough < written.length; handedThrough++) written[handedThrough]!.handedAt = at;
      running = { at, endsAt: at + lengths[passes.length % lengths.length]!, handed };
    }
  };
  let clock = 0;
  for (const { gapMs, api } of writes) {
    clock += gapMs;
    passesUntil(clock);
    written.push({ at: clock, api, handedBefore: lastHandedAt });
    if (api) alarm = nudgedPassAt(alarm, true, lastPassAt, clock) ?? alarm;
  }
  passesUntil(clock + 2 * DISPATCH_POLL_MS + NUDGE_GAP_MS);
  return { written, passes };
}

describe("the dispatcher's schedule, simulated", () => {
  test.prop([fc.array(write, { minLength: 1, maxLength: 200 }), passLengths], { numRuns: 3_000 })(
    "hands every write within DISPATCH_POLL_MS, and within NUDGE_GAP_MS an API write or one in a busy stretch",
    (writes, lengths) => {
      for (const one of simulate(writes, lengths).written) {
        const waited = one.handedAt! - one.at;
        expect(waited).toBeGreaterThanOrEqual(0);
        expect(waited).toBeLessThanOrEqual(DISPATCH_POLL_MS);
        if (one.api || one.at - one.handedBefore < BUSY_FOR_MS) expect(waited).toBeLessThanOrEqual(NUDGE_GAP_MS);
      }
    },
  );

  test.prop([fc.array(write, { minLength: 1, maxLength: 200 }), passLengths], { numRuns: 3_000 })(
    "never runs passes closer than NUDGE_GAP_MS, and keeps its slow pace once a quiet BUSY_FOR_MS has passed",
    (writes, lengths) => {
      const { written, passes } = simulate(writes, lengths);
      const nudges = written.filter((one) => one.api).map((one) => one.at);
      let nudge = 0;
      for (let i = 1; i < passes.length; i++) {
        const [before, pass] = [passes[i - 1]!, passes[i]!];
        expect(pass.at - before.at).toBeGreaterThanOrEqual(NUDGE_GAP_MS);
        // A quiet pass's next comes a poll later, unless an API write in between nudged it forward.
        while (nudge < nudges.length && nudges[nudge]! < before.at) nudge++;
        const nudged = nudge < nudges.length && nudges[nudge]! <= pass.at;
        if (before.quiet && !nudged) expect(pass.at - before.at).toBe(DISPATCH_POLL_MS);
      }
    },
  );
});

describe("the pass after a pass", () => {
  it("runs at once after a full pass, never while no endpoint is enabled, and no later than a nudge during it", () => {
    expect(afterPass({ more: true, endpoints: 3, enqueued: 0 }, 5_000, -Infinity)).toEqual({
      lastHandedAt: -Infinity,
      next: 5_000,
    });
    expect(afterPass({ more: false, endpoints: 0, enqueued: 0 }, 5_000, 4_000).next).toBeNull();
    expect(afterPass({ more: false, endpoints: 3, enqueued: 0 }, 5_000, 5_000 - BUSY_FOR_MS).next).toBe(
      5_000 + DISPATCH_POLL_MS,
    );
    expect(afterPass({ more: false, endpoints: 3, enqueued: 0 }, 5_000, 5_000 - BUSY_FOR_MS + 1).next).toBe(
      5_000 + NUDGE_GAP_MS,
    );
    expect(afterPass({ more: false, endpoints: 3, enqueued: 2 }, 5_000, -Infinity)).toEqual({
      lastHandedAt: 5_000,
      next: 5_000 + NUDGE_GAP_MS,
    });
    expect(alarmAfterPass(6_000, null)).toBe(6_000);
    expect(alarmAfterPass(6_000, 5_250)).toBeUndefined();
    expect(alarmAfterPass(6_000, 7_000)).toBe(6_000);
    expect(alarmAfterPass(null, 5_250)).toBeUndefined();
  });
});
