import { DatabaseSync } from "node:sqlite";
import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import { IdempotentAnswers, KEEP_MS, RUNNING_MS } from "../../../src/account/idempotent-answers";
import { sqlStorage } from "../../support/node-sqlite";

/**
 * The Idempotency-Key's rules (docs/design/rate-limits.md#idempotent-answers), over seeded runs of clients that send
 * and retry writes at once, Workers that answer, fail (5xx) or die mid-write, the object's alarm pruning, and time
 * passing. The store is the object's own class, IdempotentAnswers, its statements run by Node's SQLite in place of
 * the object's. The seed is printed on a failure and taken from FC_SEED when set.
 */
type Step =
  | { kind: "send"; key: number; request: number }
  | { kind: "end"; run: number; how: "answer" | "fail" | "die" }
  | { kind: "prune" }
  | { kind: "wait"; ms: number };

const KEY_ID = "key_A";

const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("send" as const), key: fc.nat(2), request: fc.nat(1) }) },
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("end" as const),
      run: fc.nat(20),
      how: fc.constantFrom("answer" as const, "fail" as const, "die" as const),
    }),
  },
  { weight: 1, arbitrary: fc.constant({ kind: "prune" as const }) },
  {
    weight: 2,
    arbitrary: fc.record({
      kind: fc.constant("wait" as const),
      ms: fc.oneof(
        fc.integer({ min: 0, max: 5_000 }),
        fc.integer({ min: 0, max: 2 * RUNNING_MS }),
        fc.constant(KEEP_MS),
      ),
    }),
  },
);

interface Run {
  key: string;
  request: string;
  startedAt: number;
  /** Still writing: not answered, failed or dead. */
  live: boolean;
  answer?: string;
  /** Its answer was kept: it still held its Idempotency-Key when it answered. */
  kept?: boolean;
}

describe("the Idempotency-Key's rules, simulated", () => {
  test.prop([fc.array(step, { minLength: 10, maxLength: 60, size: "max" })], { numRuns: 3_000 })(
    "write once: no request runs twice while its first is live or answered, and a replay is its first answer",
    (steps) => {
      const answers = new IdempotentAnswers(sqlStorage(new DatabaseSync(":memory:")));
      const runs: Run[] = [];
      // The model, from what happened alone: the run that last took each Idempotency-Key, until it failed.
      const holder = new Map<string, Run>();
      let now = Date.UTC(2030, 0, 1);
      for (const each of steps) {
        if (each.kind === "wait") {
          now += each.ms;
          continue;
        }
        if (each.kind === "prune") {
          answers.prune(now);
          continue;
        }
        if (each.kind === "end") {
          const live = runs.filter((run) => run.live);
          const run = live[each.run % Math.max(1, live.length)];
          if (!run) continue;
          run.live = false;
          const holds = holder.get(run.key) === run;
          if (each.how === "answer") {
            run.answer = `answer of the run begun at ${run.startedAt}`;
            run.kept = holds;
            answers.finish(KEY_ID, run.key, run.request, run.startedAt, {
              status: 201,
              headers: {},
              sealedBody: run.answer,
            });
          } else if (each.how === "fail") {
            answers.abandon(KEY_ID, run.key, run.request, run.startedAt);
            if (holds) holder.delete(run.key);
          }
          // A Worker that dies leaves its row running: its key is taken over after RUNNING_MS.
          continue;
        }
        const key = `idem-${each.key}`;
        const request = `POST /v2/keys/key_A/rotate\nbody-${each.request}`;
        const first = holder.get(key);
        const age = first ? now - first.startedAt : Infinity;
        const decision = answers.begin(KEY_ID, key, request, now);
        if (decision.kind === "run") {
          if (first && age < KEEP_MS) {
            // Never over another request's key within its day, nor while the first is answered or running in time.
            expect(first.request, "a key taken by another request within its day").toBe(request);
            expect(first.kept, "a second run of an answered request").not.toBe(true);
            expect(first.live && age < RUNNING_MS, "a second run while the first runs").toBe(false);
          }
          expect(decision.startedAt).toBe(now);
          const run: Run = { key, request, startedAt: now, live: true };
          runs.push(run);
          holder.set(key, run);
        } else if (decision.kind === "replay") {
          expect(first?.request).toBe(request);
          expect(first?.kept).toBe(true);
          expect(decision.answer.sealedBody).toBe(first?.answer);
          expect(age).toBeLessThan(KEEP_MS);
        } else if (decision.kind === "reused") {
          expect(first?.request).not.toBe(request);
          expect(age).toBeLessThan(KEEP_MS);
        } else {
          expect(decision.kind).toBe("in_flight");
          if (decision.kind !== "in_flight") continue;
          expect(first?.request).toBe(request);
          expect(first?.kept).not.toBe(true);
          expect(age).toBeLessThan(RUNNING_MS);
          expect(decision.retryAfterMs).toBe(RUNNING_MS - age);
        }
      }
    },
  );
});
