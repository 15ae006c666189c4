import { fc, test } from "@fast-check/vitest";
import { describe, expect, it } from "vitest";
import { cursorBefore, CURSOR_LAG, cursorMayStay } from "../../../src/webhook-delivery/lane-log";
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

  /** Reads the next page of wanted events (none while some wait), leaving out those `keyed`: those it took. */
  read(wants: (seq: number) => boolean, keyed: (seq: number) => boolean = () => false): number[] {
    if (this.waiting.length > 0 || this.readThrough >= EVENTS) return [];
    const found: number[] = [];
    for (let seq = this.readThrough + 1; seq <= EVENTS && found.length < PAGE; seq++) if (wants(seq)) found.push(seq);
    this.readThrough = found.length === PAGE ? found.at(-1)! : EVENTS;
    const taken = found.filter((seq) => !keyed(seq));
    this.waiting.push(...taken);
    return taken;
  }

  /** Starts the next event waiting, if a try is free: its sequence. */
  start(): number | undefined {
    if (this.open.size >= CONCURRENCY || this.waiting.length === 0) return undefined;
    const seq = this.waiting.shift()!;
    this.open.add(seq);
    return seq;
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
          case "read":
            return void memory.read(wants);
          case "start": {
            const seq = memory.start();
            if (seq !== undefined) sent.push(seq);
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

type RowStep = Step | { kind: "retry" | "end" } | { kind: "refuse" | "fail"; pick: number };

const rowStep: fc.Arbitrary<RowStep> = fc.oneof(
  { weight: 10, arbitrary: step },
  { weight: 3, arbitrary: fc.record({ kind: fc.constant("refuse" as const), pick: fc.nat(100) }) },
  { weight: 2, arbitrary: fc.record({ kind: fc.constant("fail" as const), pick: fc.nat(100) }) },
  { weight: 2, arbitrary: fc.constant({ kind: "retry" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "end" as const }) },
);

/** What outlives a death with refusals: the log, the cursor, the pending rows and the rows settled ahead of it. */
interface DurableRows extends Durable {
  pending: Set<number>;
  settled: Set<number>;
  settledAhead: Set<number>;
}

describe("a lane's cursor behind its refused events, simulated", () => {
  it("stays behind a short span whose events it took all have pending rows, and only then", () => {
    const rows = new Set([11, 12]);
    expect(cursorMayStay(10, 13, [11, 12], rows, rows)).toBe(true);
    // One it took failed for good (no row), or went through: the cursor must pass it.
    expect(cursorMayStay(10, 13, [11, 12, 13], rows, rows)).toBe(false);
    // A row settled ahead of it is the cursor's to pass.
    expect(cursorMayStay(10, 13, [11, 12], new Set([...rows, 13]), rows)).toBe(false);
    expect(cursorMayStay(10, 10 + CURSOR_LAG + 1, [11, 12], rows, rows)).toBe(false);
    expect(cursorMayStay(10, 10 + CURSOR_LAG, [11, 12], rows, rows)).toBe(true);
    expect(cursorMayStay(10, 10, [], rows, rows)).toBe(false);
  });

  test.prop([fc.array(fc.boolean(), { minLength: EVENTS, maxLength: EVENTS }), fc.array(rowStep, { maxLength: 300 })], {
    numRuns: 3_000,
  })(
    "a cursor left behind rows (cursorMayStay) passes no event unsent, and sends none twice as a first try but a lost one",
    (wanted, steps) => {
      const wants = (seq: number) => wanted[seq - 1] === true;
      const durable: DurableRows = {
        cursor: 0,
        logged: new Set(),
        pending: new Set(),
        settled: new Set(),
        settledAhead: new Set(),
      };
      let memory = new Memory(0);
      let taken = new Set<number>();
      /** Rows retried and taken, settled at the next flush. */
      let settling = new Set<number>();
      const firstTries: number[] = [];
      const lost = new Set<number>();
      const keyed = (seq: number) => durable.pending.has(seq) || durable.settledAhead.has(seq);
      const between = (set: Set<number>, from: number, to: number) =>
        new Set([...set].filter((seq) => seq > from && seq <= to));

      const flush = () => {
        const next = memory.waiting[0];
        const cursor = cursorBefore(next === undefined ? memory.open : [...memory.open, next], memory.readThrough);
        const stood = durable.cursor;
        const through = Math.max(cursor, stood);
        const settled = [...settling].filter((seq) => durable.pending.has(seq));
        const delivered = memory.heard.filter((seq) => seq <= cursor);
        const stays =
          delivered.length + settled.length === 0 &&
          cursorMayStay(
            stood,
            through,
            taken,
            between(new Set([...durable.pending, ...durable.settledAhead]), stood, through),
            between(durable.pending, stood, through),
          );
        for (const seq of settled) {
          durable.pending.delete(seq);
          durable.settled.add(seq);
          if (seq > through) durable.settledAhead.add(seq);
        }
        settling = new Set();
        for (const seq of delivered) {
          if (!lost.has(seq))
            expect(durable.logged.has(seq) || durable.settled.has(seq), `event ${seq} logged twice`).toBe(false);
          durable.logged.add(seq);
        }
        memory.heard = memory.heard.filter((seq) => seq > cursor);
        if (stays) return;
        // Every wanted event up to the cursor was delivered, or has a row pending or settled.
        for (let seq = stood + 1; seq <= through; seq++)
          if (wants(seq))
            expect(
              durable.logged.has(seq) || durable.pending.has(seq) || durable.settled.has(seq),
              `event ${seq} passed unsent`,
            ).toBe(true);
        durable.cursor = through;
        for (const seq of durable.settledAhead) if (seq <= through) durable.settledAhead.delete(seq);
      };
      const answer = (pick: number, how: "taken" | "refused" | "failed") => {
        if (memory.open.size === 0) return;
        const seq = [...memory.open][pick % memory.open.size]!;
        memory.open.delete(seq);
        // A refusal's row is written at once, as is a failure for good (a settled entry, no row); a try that went
        // through waits for the flush.
        if (how === "refused") durable.pending.add(seq);
        else if (how === "failed") durable.settled.add(seq);
        else memory.heard.push(seq);
      };
      const act = (each: RowStep) => {
        switch (each.kind) {
          case "read":
            for (const seq of memory.read(wants, keyed)) taken.add(seq);
            return;
          case "start": {
            const seq = memory.start();
            if (seq !== undefined) firstTries.push(seq);
            return;
          }
          case "answer":
            return answer(each.pick, "taken");
          case "refuse":
            return answer(each.pick, "refused");
          case "fail":
            return answer(each.pick, "failed");
          case "retry": {
            // A pending row's retry that goes through (one refused again changes nothing the cursor reads).
            const row = [...durable.pending].find((seq) => !settling.has(seq));
            if (row !== undefined) settling.add(row);
            return;
          }
          case "flush":
            return flush();
          case "end":
            // A run ends once its tries are answered, with a flush; the next reads from the cursor that stood.
            while (memory.open.size > 0) answer(0, "taken");
            flush();
            memory = new Memory(durable.cursor);
            taken = new Set();
            return;
          case "die":
            // What it had not flushed, and what failed for good that its cursor had not passed, is tried again.
            for (const seq of [...memory.open, ...memory.heard, ...durable.settled])
              if (seq > durable.cursor && !durable.logged.has(seq)) lost.add(seq);
            memory = new Memory(durable.cursor);
            taken = new Set();
            settling = new Set();
        }
      };
      for (const each of steps) act(each);
      // The run under way goes to its end, undisturbed, every row retried and taken; then the next wake's run, from
      // the cursor that stood, tries nothing first.
      const finish = () => {
        for (let guard = 0; guard < EVENTS && (memory.readThrough < EVENTS || memory.waiting.length > 0); guard++) {
          act({ kind: "read" });
          while (memory.waiting.length > 0 || memory.open.size > 0) {
            act({ kind: "start" });
            act({ kind: "answer", pick: 0 });
          }
        }
        for (const seq of durable.pending) settling.add(seq);
        flush();
        memory = new Memory(durable.cursor);
        taken = new Set();
      };
      finish();
      const tried = firstTries.length;
      finish();
      expect(firstTries.slice(tried)).toEqual([]);

      const every = wanted.flatMap((want, index) => (want ? [index + 1] : []));
      expect([...new Set([...durable.logged, ...durable.settled])].sort((a, b) => a - b)).toEqual(every);
      // Left behind no more than CURSOR_LAG, over events already done.
      expect(durable.cursor).toBeGreaterThanOrEqual(EVENTS - CURSOR_LAG);
      for (const seq of new Set(firstTries)) {
        const times = firstTries.filter((each) => each === seq).length;
        if (times > 1) expect(lost.has(seq), `event ${seq} tried first ${times} times`).toBe(true);
      }
    },
  );
});
