import { describe, expect } from "vitest";
import { fc, test } from "@fast-check/vitest";
import {
  acquire,
  endKeyAt,
  endedKeys,
  expiresAt,
  KEEP_FOR_KV_MS,
  keyStanding,
  revokeKey,
  rotateKeyAway,
  type LimiterState,
} from "../../../src/account/policy";

/**
 * The budget's object as the judge of key state (docs/design/rate-limits.md#key-state),
 * over seeded runs of rotations, revocations and time passing: what it
 * answers of a key matches what was told, for as long as KV may still show
 * otherwise, whatever came in between. The seed is printed on a failure and
 * taken from FC_SEED when set (test/support/property-seed.ts).
 */
const KEYS = ["key_a", "key_b", "key_c"];
const START = Date.UTC(2030, 0, 1, 23, 50);

const step = fc.oneof(
  fc.record({
    kind: fc.constant("rotate" as const),
    key: fc.constantFrom(...KEYS),
    graceMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 7 * 86_400_000 })),
  }),
  fc.record({ kind: fc.constant("revoke" as const), key: fc.constantFrom(...KEYS) }),
  fc.record({
    kind: fc.constant("end" as const),
    key: fc.constantFrom(...KEYS),
    inMs: fc.oneof(fc.constant(0), fc.integer({ min: 1, max: 30 * 86_400_000 })),
  }),
  fc.record({
    kind: fc.constant("wait" as const),
    ms: fc.oneof(fc.integer({ min: 0, max: 10_000 }), fc.integer({ min: 0, max: 2 * 86_400_000 })),
  }),
);
const LIMITS = { perMinute: 100, perDay: 1_000 };
const BAN = { threshold: 20, seconds: 900 };

describe("key state in the budget's object, simulated", () => {
  test.prop([fc.array(step, { maxLength: 40, size: "max" })], { numRuns: 2_000 })(
    "a key is refused from its grace's end, its revocation or the end an update gave it, acts only on itself from " +
      "its rotation, each until KV says so everywhere",
    (steps) => {
      let state: LimiterState | undefined;
      let now = START;
      const rotations = new Map<string, { at: number; endsAt: number }>();
      const revocations = new Map<string, number>();
      const ends = new Map<string, number>();
      for (const each of steps) {
        if (each.kind === "wait") now += each.ms;
        else if (each.kind === "revoke") {
          state = revokeKey(state, each.key, now);
          revocations.set(each.key, now);
        } else if (each.kind === "end") {
          state = endKeyAt(state, each.key, now + each.inMs, now);
          ends.set(each.key, now + each.inMs);
        } else {
          state = rotateKeyAway(state, each.key, now + each.graceMs, now);
          rotations.set(each.key, { at: now, endsAt: now + each.graceMs });
        }
        // The object's alarm forgets the whole state once nothing in it matters: never a rotation or revocation KV may
        // not show yet.
        if (state && expiresAt(state) * 1000 <= now) state = undefined;
        for (const key of KEYS) {
          const standing = keyStanding(state, key, now);
          const rotated = rotations.get(key);
          const revokedAt = revocations.get(key);
          const revokedKnown = revokedAt !== undefined && now < revokedAt + KEEP_FOR_KV_MS;
          const end = ends.get(key);
          const endedKnown =
            (rotated !== undefined && rotated.endsAt <= now && now < rotated.endsAt + KEEP_FOR_KV_MS) ||
            (end !== undefined && end <= now && now < end + KEEP_FOR_KV_MS);
          if (revokedKnown || endedKnown) expect(standing.ended, `${key} at +${now - START} ms`).toBe(true);
          if (rotated !== undefined && now < rotated.endsAt + KEEP_FOR_KV_MS) expect(standing.rotatedAway).toBe(true);
          // Nothing is ever refused that was not revoked or past a grace.
          if (
            revokedAt === undefined &&
            (rotated === undefined || rotated.endsAt > now) &&
            (end === undefined || end > now)
          )
            expect(standing.ended).toBe(false);
          // A lease request of an ended key is refused without counting it, as a revoked key's is.
          if (state && standing.ended) {
            const { verdict, state: after } = acquire(
              state,
              { keyId: key, limits: LIMITS, ban: BAN, want: 1, speculative: false },
              now,
            );
            expect(verdict.keyRevoked).toBe(true);
            expect(after.minuteCount).toBe(state.minuteCount);
            expect(endedKeys(after, now)).toContain(key);
          }
        }
      }
    },
  );
});
