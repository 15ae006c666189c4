import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import {
  DISABLE_MIN_RECENT_FAILURES,
  REFRESH_MS,
  failingVerdict,
  nextHealth,
  secondHalfFrom,
  type HealthNote,
} from "../../../src/webhook-delivery/endpoint-health";

/**
 * When a lane writes its endpoint's health for operators: on a change of state, and every REFRESH_MS while it delivers.
 */
describe("an endpoint's health note", () => {
  const t = 1_000_000;
  it("is written on the first run that attempted anything, on each change of state, and not on runs that change nothing", () => {
    // Nothing POSTed (nothing due, or only events pruned before their turn): the receiver was not asked.
    expect(nextHealth(undefined, { delivered: 0, sent: 0 }, t)).toEqual({
      note: { failingSince: null, lastDeliveredAt: null, writtenAt: 0 },
      write: false,
    });
    const failing = nextHealth(undefined, { delivered: 0, sent: 2 }, t);
    expect(failing).toEqual({ note: { failingSince: t, lastDeliveredAt: null, writtenAt: t }, write: true });
    // Still failing: nothing to write, and since when stays.
    expect(nextHealth(failing.note, { delivered: 0, sent: 1 }, t + 5_000)).toEqual({
      note: failing.note,
      write: false,
    });
    const back = nextHealth(failing.note, { delivered: 1, sent: 3 }, t + 9_000);
    expect(back).toEqual({
      note: { failingSince: null, lastDeliveredAt: t + 9_000, writtenAt: t + 9_000, toldFailing: null },
      write: true,
    });
    expect(nextHealth(back.note, { delivered: 0, sent: 1 }, t + 10_000)).toEqual({
      note: { failingSince: t + 10_000, lastDeliveredAt: t + 9_000, writtenAt: t + 10_000, toldFailing: null },
      write: true,
    });
  });

  it("while it delivers, is written at most every REFRESH_MS, its last delivery kept in the note between", () => {
    let note: HealthNote = nextHealth(undefined, { delivered: 1, sent: 1 }, t).note;
    let writes = 0;
    for (let at = t + 1_000; at <= t + 3 * REFRESH_MS; at += 1_000) {
      const next = nextHealth(note, { delivered: 5, sent: 5 }, at);
      writes += next.write ? 1 : 0;
      note = next.note;
      expect(note.lastDeliveredAt).toBe(at);
    }
    expect(writes).toBe(3);
  });
});

describe("a failing period's verdict", () => {
  const periods = { failingAfterMs: 86_400_000, disableAfterMs: 5 * 86_400_000 };
  const t = 1_000_000;
  const failing: HealthNote = { failingSince: t, lastDeliveredAt: null, writtenAt: t };

  it("tells the owner once the period reaches failingAfterMs, once; disables at disableAfterMs with 3 recent failures", () => {
    expect(failingVerdict(failing, 10, periods, t + periods.failingAfterMs - 1)).toBe("none");
    expect(failingVerdict(failing, 10, periods, t + periods.failingAfterMs)).toBe("tell failing");
    expect(failingVerdict({ ...failing, toldFailing: t }, 10, periods, t + periods.failingAfterMs)).toBe("none");
    // A told period of before does not count for this one.
    expect(failingVerdict({ ...failing, toldFailing: t - 1 }, 0, periods, t + periods.failingAfterMs)).toBe(
      "tell failing",
    );
    const end = t + periods.disableAfterMs;
    expect(failingVerdict(failing, DISABLE_MIN_RECENT_FAILURES - 1, periods, end)).toBe("tell failing");
    expect(failingVerdict(failing, DISABLE_MIN_RECENT_FAILURES, periods, end - 1)).toBe("tell failing");
    expect(failingVerdict(failing, DISABLE_MIN_RECENT_FAILURES, periods, end)).toBe("disable");
    expect(failingVerdict({ ...failing, failingSince: null }, 99, periods, end)).toBe("none");
    expect(secondHalfFrom(t, end)).toBe(t + periods.disableAfterMs / 2);
  });

  /**
   * Seeded runs of a lane over weeks: runs that deliver, or fail, at random times, the verdict applied as the lane
   * applies it. An endpoint is never disabled while a delivery got through within disableAfterMs, nor without
   * DISABLE_MIN_RECENT_FAILURES failures in the second half of its period; its owner is told at most once a period, and
   * never later than its disabling when told at all in time.
   */
  const run = fc.record({
    gapMs: fc.oneof(fc.integer({ min: 1, max: 60_000 }), fc.integer({ min: 1, max: 2 * 86_400_000 })),
    delivered: fc.boolean(),
  });
  test.prop([fc.array(run, { minLength: 1, maxLength: 80 })], { numRuns: 3_000 })(
    "never disables an endpoint that delivered within the period, or with too few recent failures; tells once a period",
    (runs) => {
      let now = t;
      let note: HealthNote | undefined;
      const failures: number[] = [];
      let lastDelivered: number | null = null;
      const told = new Set<number>();
      for (const { gapMs, delivered } of runs) {
        now += gapMs;
        if (delivered) lastDelivered = now;
        else failures.push(now);
        note = nextHealth(note, { delivered: delivered ? 1 : 0, sent: 1 }, now).note;
        if (note.failingSince === null) continue;
        const recent = failures.filter((at) => at >= secondHalfFrom(note!.failingSince!, now)).length;
        const verdict = failingVerdict(note, recent, periods, now);
        if (verdict === "disable") {
          expect(lastDelivered === null || now - lastDelivered >= periods.disableAfterMs).toBe(true);
          expect(now - note.failingSince).toBeGreaterThanOrEqual(periods.disableAfterMs);
          expect(recent).toBeGreaterThanOrEqual(DISABLE_MIN_RECENT_FAILURES);
          return;
        }
        if (verdict === "tell failing") {
          expect(told.has(note.failingSince)).toBe(false);
          expect(now - note.failingSince).toBeGreaterThanOrEqual(periods.failingAfterMs);
          told.add(note.failingSince);
          note = { ...note, toldFailing: note.failingSince };
        }
      }
    },
  );
});
