import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import { decideRetry, KEEP_MS, RUNNING_MS, type RetryRecord } from "../../../src/limiter/idempotent-answers";

/**
 * The Idempotency-Key's rules (docs/design/rate-limits.md#idempotent-answers), over seeded runs of clients that send
 * and retry writes at once, Workers that answer, fail (5xx) or die mid-write, and time passing: the store here does
 * what IdempotentAnswers' statements do (mark running with the decision, keep an answer only for the run that holds
 * the key, let it go on a 5xx). The seed is printed on a failure and taken from FC_SEED when set.
 */
type Step =
  | { kind: "send"; key: number; request: number }
  | { kind: "end"; run: number; how: "answer" | "fail" | "die" }
  | { kind: "wait"; ms: number };

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
}

describe("the Idempotency-Key's rules, simulated", () => {
  test.prop([fc.array(step, { maxLength: 60 })], { numRuns: 3_000 })(
    "write once: no request runs twice while its first is live or answered, and a replay is its first answer",
    (steps) => {
      const kept = new Map<string, RetryRecord>();
      const runs: Run[] = [];
      let now = Date.UTC(2030, 0, 1);
      for (const each of steps) {
        if (each.kind === "wait") {
          now += each.ms;
          continue;
        }
        if (each.kind === "end") {
          const run = runs[each.run];
          if (!run?.live) continue;
          run.live = false;
          const record = kept.get(run.key);
          const holds = record?.startedAt === run.startedAt && record.request === run.request && !record.answer;
          if (each.how === "answer") {
            run.answer = `answer of the run begun at ${run.startedAt}`;
            if (holds) record.answer = { status: 201, headers: {}, sealedBody: run.answer };
          } else if (each.how === "fail" && holds) kept.delete(run.key);
          // A Worker that dies leaves its row running: its key is taken over after RUNNING_MS.
          continue;
        }
        const key = `idem-${each.key}`;
        const request = `POST /v2/keys/key_A/rotate\nbody-${each.request}`;
        const decision = decideRetry(kept.get(key), request, now);
        const sameRequest = runs.filter((run) => run.key === key && run.request === request);
        if (decision.kind === "run") {
          // Never while a run of the same request is live and within its time, or answered within the day.
          const blocking = sameRequest.find(
            (run) =>
              (run.live && now - run.startedAt < RUNNING_MS) ||
              (run.answer !== undefined && kept.get(key)?.startedAt === run.startedAt && now - run.startedAt < KEEP_MS),
          );
          expect(blocking, "a second run of a request whose first is live or answered").toBeUndefined();
          kept.set(key, { request, startedAt: now });
          runs.push({ key, request, startedAt: now, live: true });
        } else if (decision.kind === "replay") {
          const first = sameRequest.find((run) => run.startedAt === kept.get(key)!.startedAt);
          expect(decision.answer.sealedBody).toBe(first?.answer);
        } else if (decision.kind === "reused") {
          expect(kept.get(key)!.request).not.toBe(request);
          expect(now - kept.get(key)!.startedAt).toBeLessThan(KEEP_MS);
        } else {
          expect(decision.retryAfterMs).toBeGreaterThan(0);
          expect(decision.retryAfterMs).toBeLessThanOrEqual(RUNNING_MS);
        }
      }
    },
  );
});
