import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import {
  DISABLE_MIN_RECENT_FAILURES,
  REFRESH_MS,
  failingVerdict,
  nextHealth,
  periodStart,
  secondHalfFrom,
  type HealthNote,
} from "../../../src/webhook-delivery/endpoint-health";

/**
 * When a lane writes its endpoint's health for operators: on a change of state, and every REFRESH_MS while it delivers.
 */
describe("an endpoint's health note", () => {
  const t = 1_000_000;
  const none: HealthNote = { failingSince: null, lastDeliveredAt: null };
  it("is written on the first run that attempted anything, on each change of state, and not on runs that change nothing", () => {
    const ran = (delivered: number, sent: number, failingFrom: number | null = null) => ({
      delivered,
      sent,
      failingFrom,
    });
    // Nothing POSTed (nothing due, or only events pruned before their turn): the receiver was not asked.
    expect(nextHealth(none, ran(0, 0), t)).toEqual({ note: none, write: false });
    // A first failing run opens nothing: its retry may be taken.
    expect(nextHealth(none, ran(0, 2), t)).toEqual({ note: none, write: false });
    // The second opens the period, dated from the first failure.
    const failing = nextHealth(none, ran(0, 1, t), t + 10_000);
    expect(failing).toEqual({ note: { failingSince: t, lastDeliveredAt: null }, write: true });
    // Still failing: nothing to write, and since when stays.
    expect(nextHealth(failing.note, ran(0, 1, t + 10_000), t + 15_000)).toEqual({ note: failing.note, write: false });
    const back = nextHealth(failing.note, ran(1, 3), t + 19_000);
    expect(back).toEqual({
      note: { failingSince: null, lastDeliveredAt: t + 19_000, toldFailing: null },
      write: true,
    });
    expect(nextHealth(back.note, ran(0, 1, t + 20_000), t + 30_000)).toEqual({
      note: { failingSince: t + 20_000, lastDeliveredAt: t + 19_000, toldFailing: null },
      write: true,
    });
  });

  it("opens a period at the first failure before the run, counting from just after the last success or a reset", () => {
    expect(periodStart([], 0, t)).toBeNull();
    expect(periodStart([t + 5, t - 20, t - 10], 0, t)).toBe(t - 20);
    // This run's own failures are not before it; those before `from` belong to no period.
    expect(periodStart([t, t + 1], 0, t)).toBeNull();
    expect(periodStart([t - 20, t - 10], t - 15, t)).toBe(t - 10);
    expect(periodStart([t - 20, t - 10], t - 9, t)).toBeNull();
  });

  it("while it delivers, is written at most every REFRESH_MS: the row's last delivery is at most that old", () => {
    let note: HealthNote = nextHealth(none, { delivered: 1, sent: 1, failingFrom: null }, t).note;
    let writes = 0;
    for (let at = t + 1_000; at <= t + 3 * REFRESH_MS; at += 1_000) {
      const next = nextHealth(note, { delivered: 5, sent: 5, failingFrom: null }, at);
      writes += next.write ? 1 : 0;
      note = next.note;
      expect(at - note.lastDeliveredAt!).toBeLessThan(REFRESH_MS);
      if (next.write) expect(note.lastDeliveredAt).toBe(at);
    }
    expect(writes).toBe(3);
  });
});

describe("a failing period's verdict", () => {
  const periods = { failingAfterMs: 86_400_000, disableAfterMs: 5 * 86_400_000 };
  const t = 1_000_000;
  const failing: HealthNote = { failingSince: t, lastDeliveredAt: null };

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
   * applies it. A period is noted from its second failing run, dated from its first failure; an endpoint is never
   * disabled while a delivery got through within disableAfterMs, nor without DISABLE_MIN_RECENT_FAILURES failures in
   * the second half of its period; its owner is told at most once a period, and never later than its disabling when
   * told at all in time.
   */
  const run = fc.record({
    gapMs: fc.oneof(fc.integer({ min: 1, max: 60_000 }), fc.integer({ min: 1, max: 2 * 86_400_000 })),
    delivered: fc.boolean(),
  });
  test.prop([fc.array(run, { minLength: 1, maxLength: 80 })], { numRuns: 3_000 })(
    "never disables an endpoint that delivered within the period, or with too few recent failures; tells once a period",
    (runs) => {
      let now = t;
      let note: HealthNote = { failingSince: null, lastDeliveredAt: null };
      const failures: number[] = [];
      let lastDelivered: number | null = null;
      const told = new Set<number>();
      for (const { gapMs, delivered } of runs) {
        now += gapMs;
        const failingFrom = delivered ? null : periodStart(failures, (lastDelivered ?? -1) + 1, now);
        if (delivered) lastDelivered = now;
        else failures.push(now);
        note = nextHealth(note, { delivered: delivered ? 1 : 0, sent: 1, failingFrom }, now).note;
        const sinceSuccess = failures.filter((at) => lastDelivered === null || at > lastDelivered);
        // Noted exactly from the second failure since the last success, dated from the first.
        expect(note.failingSince).toBe(sinceSuccess.length < 2 ? null : sinceSuccess[0]);
        if (note.failingSince === null) continue;
        const recent = failures.filter((at) => at >= secondHalfFrom(note.failingSince!, now)).length;
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
