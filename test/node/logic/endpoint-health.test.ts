import { describe, expect, it } from "vitest";
import { REFRESH_MS, nextHealth, type HealthNote } from "../../../src/webhook-delivery/endpoint-health";

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
      note: { failingSince: null, lastDeliveredAt: t + 9_000, writtenAt: t + 9_000 },
      write: true,
    });
    expect(nextHealth(back.note, { delivered: 0, sent: 1 }, t + 10_000)).toEqual({
      note: { failingSince: t + 10_000, lastDeliveredAt: t + 9_000, writtenAt: t + 10_000 },
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
