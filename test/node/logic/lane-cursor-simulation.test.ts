import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import { cursorBefore } from "../../../src/webhook-delivery/lane-log";
import { seedProperties } from "../../support/property-seed";

/**
 * A lane's cursor over the feed (docs/design/order-events.md#lanes), over seeded runs: pages read ahead, tries started
 * six at once and answered in any order, flushes at any moment, and deaths that lose all but what was flushed. The rule
 * under test is the lane's own (cursorBefore); the lane around it is a model. The seed is printed on a failure and
 * taken from FC_SEED when set.
 */
seedProperties(process.env.FC_SEED);

const EVENTS = 60;
const PAGE = 8;
const CONCURRENCY = 6;

type Step = { kind: "read" | "start" | "flush" | "die" } | { kind: "answer"; pick: number };

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 3, arbitrary: fc.constant({ kind: "read" as const }) },
  { weight: 5, arbitrary: fc.constant({ kind: "start" as const }) },
  { weight: 5, arbitrary: fc.record({ kind: fc.constant("answer" as const), pick: fc.nat(100) }) },
  { weight: 2, arbitrary: fc.constant({ kind: "flush" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "die" as const }) },
);

/** What outlives a death: the log's entries and its cursor. */
interface Durable {
  cursor: number;
  logged: Set<number>;
}

/** A lane's memory: what it read, started and heard back, lost when it dies. */
class Memory {
  readThrough: number;
  waiting: number[] = [];
  open = new Set<number>();
  heard: number[] = [];
  constructor(cursor: number) {
    this.readThrough = cursor;
  }
}

describe("a lane's cursor, simulated", () => {
  test.prop([fc.array(fc.boolean(), { minLength: EVENTS, maxLength: EVENTS }), fc.array(step, { maxLength: 300 })], {
    numRuns: 3_000,
  })(
    "no event is passed over unsent, none is logged twice, and a death re-sends only what was not flushed",
    (wanted, steps) => {
      const wants = (seq: number) => wanted[seq - 1] === true;
      const durable: Durable = { cursor: 0, logged: new Set() };
      let memory = new Memory(0);
      const sent: number[] = [];
      /** Sent and heard back, not yet flushed, when the lane died: what may be sent again. */
      const lost = new Set<number>();

      const flush = () => {
        const next = memory.waiting[0];
        const cursor = cursorBefore(next === undefined ? memory.open : [...memory.open, next], memory.readThrough);
        // Every wanted event up to the cursor was sent and heard back, by this life or one before.
        for (let seq = durable.cursor + 1; seq <= cursor; seq++)
          if (wants(seq)) expect(memory.heard.includes(seq) || durable.logged.has(seq), `event ${seq}`).toBe(true);
        for (const seq of memory.heard.filter((seq) => seq <= cursor)) {
          expect(durable.logged.has(seq), `event ${seq} logged twice`).toBe(false);
          durable.logged.add(seq);
        }
        memory.heard = memory.heard.filter((seq) => seq > cursor);
        durable.cursor = Math.max(durable.cursor, cursor);
      };
      const act = (each: Step) => {
        switch (each.kind) {
          case "read": {
            if (memory.waiting.length > 0 || memory.readThrough >= EVENTS) return;
            const found: number[] = [];
            let seq = memory.readThrough + 1;
            for (; seq <= EVENTS && found.length < PAGE; seq++) if (wants(seq)) found.push(seq);
            memory.waiting.push(...found);
            memory.readThrough = found.length === PAGE ? found.at(-1)! : EVENTS;
            return;
          }
          case "start": {
            if (memory.open.size >= CONCURRENCY || memory.waiting.length === 0) return;
            const seq = memory.waiting.shift()!;
            memory.open.add(seq);
            sent.push(seq);
            return;
          }
          case "answer": {
            if (memory.open.size === 0) return;
            const seq = [...memory.open][each.pick % memory.open.size]!;
            memory.open.delete(seq);
            memory.heard.push(seq);
            return;
          }
          case "flush":
            return flush();
          case "die":
            for (const seq of [...memory.open, ...memory.heard]) lost.add(seq);
            memory = new Memory(durable.cursor);
        }
      };
      for (const each of steps) act(each);
      // The lane then runs to the end, undisturbed.
      for (let guard = 0; guard < 10 * EVENTS && (memory.readThrough < EVENTS || memory.waiting.length > 0); guard++) {
        act({ kind: "read" });
        while (memory.waiting.length > 0 || memory.open.size > 0) {
          act({ kind: "start" });
          act({ kind: "answer", pick: 0 });
        }
      }
      flush();

      const every = wanted.flatMap((want, index) => (want ? [index + 1] : []));
      expect([...durable.logged].sort((a, b) => a - b)).toEqual(every);
      expect(durable.cursor).toBe(EVENTS);
      for (const seq of new Set(sent)) {
        const times = sent.filter((each) => each === seq).length;
        if (times > 1) expect(lost.has(seq), `event ${seq} sent ${times} times`).toBe(true);
      }
    },
  );
});
