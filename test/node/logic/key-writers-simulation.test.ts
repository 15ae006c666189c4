import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import { isUsable, type ApiKeyRecord } from "../../../src/account/key-record";
import { withChanges, withKnownEnd } from "../../../src/keys/budget-records";
import {
  endKeyAt,
  expiresAt,
  keyStanding,
  LEASE_MS,
  revokeKey,
  rotateKeyAway,
  type LimiterState,
} from "../../../src/account/policy";

/**
 * Several writers at once over one budget's keys (docs/design/rate-limits.md#key-state): an owner, an operator, the
 * secret scanner and the keys command, each at a location whose KV answers a record as it was up to a minute ago,
 * revoking, rotating, giving ends and renaming by the rules the operations follow (ask the budget's object, write back
 * what it knows: keys/rotate-key.ts, operator/update-key.ts), while locations decide requests from their lagging record
 * and the object's answer of up to a lease ago. Whatever the interleaving, a key revoked or past its end is never
 * decided live again once a lease has passed. The seed is printed on a failure and taken from FC_SEED when set.
 */
const KEYS = ["key_a", "key_b", "key_c"];
const MINUTE = 60_000;
const START = Date.UTC(2030, 0, 1, 23, 30);

type Step =
  | { kind: "revoke" | "rename"; key: number; lagMs: number }
  | { kind: "rotate"; key: number; lagMs: number; graceMs: number }
  | { kind: "end"; key: number; lagMs: number; inMs: number }
  | { kind: "decide"; key: number; lagMs: number; leaseAgoMs: number }
  | { kind: "wait"; ms: number };

const key = fc.nat(KEYS.length - 1);
const lagMs = fc.integer({ min: 0, max: MINUTE });
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({ kind: fc.constantFrom("revoke" as const, "rename" as const), key, lagMs }),
  fc.record({ kind: fc.constant("rotate" as const), key, lagMs, graceMs: fc.integer({ min: 0, max: 2 * MINUTE }) }),
  fc.record({ kind: fc.constant("end" as const), key, lagMs, inMs: fc.integer({ min: 0, max: 30 * MINUTE }) }),
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant("decide" as const),
      key,
      lagMs,
      leaseAgoMs: fc.integer({ min: 0, max: LEASE_MS }),
    }),
  },
  fc.record({
    kind: fc.constant("wait" as const),
    ms: fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 15 * MINUTE })),
  }),
);

/** KV as every location may read it: each version of a record with when it was written. */
class LaggingKv {
  readonly #versions = new Map<string, { at: number; record: ApiKeyRecord }[]>();
  write(record: ApiKeyRecord, at: number) {
    this.#versions.set(record.id, [...(this.#versions.get(record.id) ?? []), { at, record }]);
  }
  /** The newest version written at least `lagMs` ago, else the first (written long before the run). */
  read(id: string, now: number, lagMs: number): ApiKeyRecord | undefined {
    const versions = this.#versions.get(id) ?? [];
    return (versions.findLast((version) => version.at <= now - lagMs) ?? versions[0])?.record;
  }
}

describe("several writers over a budget's keys, simulated", () => {
  test.prop([fc.array(step, { minLength: 10, maxLength: 60, size: "max" })], { numRuns: 2_000 })(
    "no key revoked or past its end is decided live again, whoever wrote what from wherever",
    (steps) => {
      const kv = new LaggingKv();
      let object: LimiterState | undefined;
      // The object's answers, kept: a location decides by its lease's answer, at most a lease old.
      const answers: { at: number; state: LimiterState | undefined }[] = [];
      // What truly happened to each key: revoked when, and the earliest end it was given.
      const revokedAt = new Map<string, number>();
      const endsAt = new Map<string, number>();
      const ended = (id: string, at: number) =>
        (revokedAt.get(id) ?? Infinity) <= at || (endsAt.get(id) ?? Infinity) <= at;
      let now = START;
      for (const id of KEYS)
        kv.write(
          { id, plan: "pro", name: id, createdAt: "2030-01-01T00:00:00.000Z", scopes: ["orders:read"] },
          START - 3_600_000,
        );
      const tell = (change: (state: LimiterState | undefined) => LimiterState) => {
        object = change(object);
        answers.push({ at: now, state: object });
      };
      for (const each of steps) {
        if (object && expiresAt(object) * 1000 <= now) object = undefined;
        if (each.kind === "wait") {
          now += each.ms;
          continue;
        }
        const id = KEYS[each.key]!;
        const read = kv.read(id, now, each.lagMs)!;
        const standing = keyStanding(object, id, now);
        if (each.kind === "decide") {
          const answer = answers.findLast((kept) => kept.at <= now - each.leaseAgoMs)?.state ?? object;
          const live = isUsable(read, now) && !keyStanding(answer, id, now).ended;
          if (ended(id, now - LEASE_MS)) expect(live, `${id} at +${now - START} ms`).toBe(false);
          continue;
        }
        if (each.kind === "revoke") {
          tell((state) => revokeKey(state, id, now));
          kv.write({ ...read, revokedAt: new Date(now).toISOString() }, now);
          if (!revokedAt.has(id)) revokedAt.set(id, now);
          continue;
        }
        // The other writes ask the object first and refuse a key it says is gone, whatever the record read says.
        const record = withKnownEnd(read, standing);
        if (standing.ended || record.revokedAt !== undefined) continue;
        const rotatedAway = standing.rotatedAway || record.rotatedTo !== undefined;
        if (each.kind === "rotate") {
          // Only a key that works is rotated.
          if (rotatedAway || !isUsable(record, now)) continue;
          const end = now + each.graceMs;
          const ends = record.expiresAt && Date.parse(record.expiresAt) < end ? Date.parse(record.expiresAt) : end;
          kv.write({ ...record, expiresAt: new Date(ends).toISOString(), rotatedTo: "key_new" }, now);
          tell((state) => rotateKeyAway(state, id, ends, now));
          endsAt.set(id, Math.min(endsAt.get(id) ?? Infinity, ends));
        } else if (each.kind === "end") {
          if (rotatedAway) continue;
          const end = now + each.inMs;
          kv.write(withChanges(record, { expiresAt: new Date(end).toISOString() }), now);
          tell((state) => endKeyAt(state, id, end, now));
          // A later end replaces an earlier one (an update may give an expired key a new end): the last one holds.
          endsAt.set(id, end);
        } else {
          // A record of a key rotated a moment ago, read before the rotation reached here, is not written back.
          if (standing.rotatedAway && record.rotatedTo === undefined) continue;
          kv.write(withChanges(record, { name: `${id} renamed` }), now);
        }
      }
    },
  );
});
