import { DatabaseSync } from "node:sqlite";
import { fc, test } from "@fast-check/vitest";
import { describe, expect } from "vitest";
import { AccountKeys } from "../../../src/account/account-keys";
import { revoked, standingOf, type ApiKeyRecord } from "../../../src/account/key-record";
import { revocationRefusal, rotationOf, updateRefusal } from "../../../src/account/key-rules";
import { absorbAnswer, decideLocally, newLeaseBook, type LeaseBook } from "../../../src/account/lease-book";
import { decide, LEASE_MS } from "../../../src/account/policy";
import { PLAN_LIMITS, type Limits } from "../../../src/account/plans";
import { accessOf } from "../../../src/account/request-admission";
import type { KeyNeed, Scope } from "../../../src/framework/operations/scopes";
import { sqlStorage } from "../../support/node-sqlite";

/**
 * Several writers at once over one account's keys (docs/design/rate-limits.md#key-state): its owner's keys, an
 * operator, the secret scanner and the keys command (an operator's client), creating, rotating, revoking, ending
 * and re-planning, at locations whose KV shows a new key's pointer up to a minute late, while isolates decide
 * requests from the account's word of up to a lease ago. The account is the code's own: its key table
 * (AccountKeys, over Node's SQLite) and its rules (key-rules.ts, account-keys.ts); the isolates' books are
 * lease-book.ts. Whatever the interleaving: every request an isolate admits was of a key live at the account
 * within a lease before, by limits it held within that lease, with the scopes asked and, acting beyond itself, not
 * rotated away a lease before (accessOf, the one answer); one the account answers itself is decided as the account
 * holds it at that moment (limits set alone keep its plan), only a live key is rotated, by a live one, and no
 * key revoked is ever live again. The seed is printed on a failure and taken from FC_SEED when set.
 */
const MINUTE = 60_000;
const START = Date.UTC(2030, 0, 1, 23, 30);
const BAN = { threshold: 20, seconds: 900 };
const ISOLATES = 3;

type Writer = "owner" | "operator" | "scanner" | "cli";
type Step =
  | { kind: "create"; lagMs: number; scopes: Scope[] }
  | { kind: "revoke"; writer: Writer; key: number; asker: number }
  | { kind: "rotate"; writer: Writer; key: number; asker: number; graceMs: number }
  | { kind: "end"; key: number; inMs: number }
  | { kind: "plan"; key: number }
  | { kind: "limits"; perMinute: number }
  | { kind: "request"; key: number; isolate: number; need: KeyNeed }
  | { kind: "wait"; ms: number };

const key = fc.nat(7);
/** What the operation asks of the key: any key, either scope a key here may have, or to act beyond itself. */
const need = fc.constantFrom<KeyNeed>(
  { scopes: [] },
  { scopes: ["orders:read"] },
  { scopes: ["orders:write"] },
  { scopes: ["orders:read"], beyondItself: "webhook endpoints" },
);
const writer = fc.constantFrom<Writer>("owner", "operator", "scanner", "cli");
const step: fc.Arbitrary<Step> = fc.oneof(
  fc.record({
    kind: fc.constant("create" as const),
    lagMs: fc.integer({ min: 0, max: MINUTE }),
    scopes: fc.constantFrom<Scope[]>(["orders:read"], ["orders:write"], ["orders:read", "orders:write"]),
  }),
  fc.record({ kind: fc.constant("revoke" as const), writer, key, asker: key }),
  fc.record({
    kind: fc.constant("rotate" as const),
    writer,
    key,
    asker: key,
    graceMs: fc.integer({ min: 0, max: 2 * MINUTE }),
  }),
  fc.record({ kind: fc.constant("end" as const), key, inMs: fc.integer({ min: 1, max: 10 * MINUTE }) }),
  fc.record({ kind: fc.constant("plan" as const), key }),
  fc.record({ kind: fc.constant("limits" as const), perMinute: fc.integer({ min: 1, max: 5_000 }) }),
  {
    weight: 4,
    arbitrary: fc.record({ kind: fc.constant("request" as const), key, isolate: fc.nat(ISOLATES - 1), need }),
  },
  fc.record({ kind: fc.constant("wait" as const), ms: fc.integer({ min: 0, max: 20_000 }) }),
);

const iso = (ms: number) => new Date(ms).toISOString();

describe("several writers over one account's keys, simulated", () => {
  test.prop([fc.array(step, { maxLength: 60, size: "max" })], { numRuns: 2_000 })(
    "every decision is the account's, at most a lease old, and no revoked key is live again",
    (steps) => {
      const keys = new AccountKeys(sqlStorage(new DatabaseSync(":memory:")));
      let now = START;
      let made = 0;
      const ids: string[] = [];
      /** When each key's pointer reaches every location (KV's lag). */
      const visibleAt = new Map<string, number>();
      /** When each key last stood live at the account, as far as the writes tell. */
      const revokedAt = new Map<string, number>();
      /** When each key was rotated away. */
      const rotatedAt = new Map<string, number>();
      const books: LeaseBook[] = Array.from({ length: ISOLATES }, newLeaseBook);
      /** The account's limits from each time on, as its plan moved. */
      const limitsFrom: { at: number; limits: Limits }[] = [{ at: START, limits: PLAN_LIMITS.pro }];
      const plans: ("pro" | "business")[] = ["pro"];
      const inForceSince = (since: number) =>
        limitsFrom.filter((_, index) => (limitsFrom[index + 1]?.at ?? Infinity) > since).map((each) => each.limits);
      const newId = () => `key_${String(made++).padStart(16, "0")}`;
      const create = (lagMs: number, scopes: Scope[]) => {
        const id = newId();
        const record: ApiKeyRecord = {
          id,
          start: "so_test_AAAA",
          plan: "pro",
          name: id,
          createdAt: iso(now),
          scopes,
        };
        keys.add(ids.length === 0 ? record : { ...record, budget: ids[0] });
        ids.push(id);
        visibleAt.set(id, now + lagMs);
      };
      create(0, ["orders:read"]);
      const pick = (index: number) => ids[index % ids.length]!;

      for (const each of steps) {
        if (each.kind === "wait") now += each.ms;
        else if (each.kind === "create") create(each.lagMs, each.scopes);
        else if (each.kind === "revoke") {
          const id = pick(each.key);
          const before = keys.get(id)!;
          // An owner's key asks: the account refuses one that may act only on itself revoking another.
          const askedBy = each.writer === "owner" ? pick(each.asker) : undefined;
          const asker = askedBy === undefined ? undefined : keys.get(askedBy);
          const refused = revocationRefusal(asker, askedBy, id, now) !== undefined;
          const free = standingOf(asker, now) === "live" && !asker?.rotatedTo && !asker?.expiresAt;
          expect(refused, `${askedBy} revoking ${id}`).toBe(askedBy !== undefined && askedBy !== id && !free);
          if (refused) continue;
          keys.put(revoked(before, each.writer === "scanner" ? "leaked" : "retired", iso(now)));
          if (!revokedAt.has(id)) revokedAt.set(id, now);
        } else if (each.kind === "rotate") {
          const asker = each.writer === "owner" ? keys.get(pick(each.asker)) : undefined;
          const target = keys.get(pick(each.key));
          const rotation = rotationOf(
            target,
            asker,
            { id: newId(), start: "so_test_AAAA", createdAt: iso(now) },
            iso(now + each.graceMs),
            now,
          );
          if (rotation.kind === "rotated") {
            // Only a live key is rotated, and by a key live itself: a revoked one never gets a live successor.
            expect(standingOf(target, now)).toBe("live");
            if (asker) expect(standingOf(asker, now)).toBe("live");
            keys.put(rotation.previous);
            keys.add(rotation.rotated);
            rotatedAt.set(rotation.previous.id, now);
            ids.push(rotation.rotated.id);
            visibleAt.set(rotation.rotated.id, now);
          } else if (target && standingOf(target, now) === "live" && target.rotatedTo === undefined && !asker)
            throw new Error(`an operator's rotation of a live key was refused: ${rotation.kind}`);
        } else if (each.kind === "end") {
          const id = pick(each.key);
          const update = { expiresAt: iso(now + each.inMs) };
          if (!updateRefusal(keys.get(id), update, now)) keys.put({ ...keys.get(id)!, ...update });
        } else if (each.kind === "plan") {
          const plan = plans.at(-1) === "pro" ? "business" : "pro";
          keys.setPlan({ plan });
          plans.push(plan);
          limitsFrom.push({ at: now, limits: PLAN_LIMITS[plan] });
        } else if (each.kind === "limits") {
          // An operator's limits alone: the plan stays the account's, whatever the operator read.
          const limits = { perMinute: each.perMinute, perDay: 100 * each.perMinute };
          keys.setPlan({ limits });
          limitsFrom.push({ at: now, limits });
        } else {
          const id = pick(each.key);
          const book = books[each.isolate]!;
          if (now < visibleAt.get(id)!) continue; // Not found here yet: 401, nothing decided of the key.
          const local = decideLocally(book, BAN, now, id);
          const record = keys.get(id)!;
          if (local) {
            // From the account's word of up to a lease ago: the key stood live within it, or is refused.
            const access = accessOf(local.outcome, local.key, each.need);
            if (access === "allowed") {
              expect(local.key?.standing).toBe("live");
              expect(each.need.scopes.every((scope) => record.scopes.includes(scope))).toBe(true);
              if (each.need.beyondItself)
                expect(now, `${id} acted beyond itself after its rotation`).toBeLessThan(
                  (rotatedAt.get(id) ?? Infinity) + LEASE_MS,
                );
            }
            if (local.key?.standing === "live") {
              const stopped = revokedAt.get(id) ?? endOf(record);
              expect(now, `${id} admitted here after it stopped`).toBeLessThan(stopped + LEASE_MS);
              // By limits the account held within a lease: a plan moved holds everywhere once the leases before end.
              expect(inForceSince(now - LEASE_MS).map((limits) => limits.perMinute)).toContain(local.minute.limit);
            }
            continue;
          }
          // The account answers: its standing now, and the verdict by its plan.
          const standing = standingOf(record, now);
          expect(record.limits ?? PLAN_LIMITS[record.plan as "pro" | "business"]).toEqual(limitsFrom.at(-1)!.limits);
          expect(record.plan).toBe(plans.at(-1));
          const { verdict } = decide(undefined, limitsFrom.at(-1)!.limits, BAN, now, { want: 5 });
          const answer = { ...verdict, key: { standing, ...(standing !== "revoked" && { record }) } };
          const taken = absorbAnswer(book, answer, now, true, { id: `ask-${now}`, keyId: id }, now);
          expect(taken?.key?.standing).toBe(standing);
          // The one answer for the request: allowed only as the account holds the key now, refused saying why.
          const access = accessOf(taken!.outcome, taken!.key, each.need);
          const lacks = each.need.scopes.some((scope) => !record.scopes.includes(scope));
          if (standing !== "live") expect(access).toBe(standing);
          else if (lacks) expect(access).toBe("insufficient_scope");
          else if (each.need.beyondItself && record.rotatedTo) expect(access).toBe("acts_only_on_itself");
          else expect(access).toBe("allowed");
        }
        // No revoked key is ever live again, whoever wrote since.
        for (const id of revokedAt.keys()) expect(standingOf(keys.get(id), now)).toBe("revoked");
      }
    },
  );
});

/** When a key stops being live by its end alone (its expiry, or its rotation's grace): never, without one. */
const endOf = (record: ApiKeyRecord) => (record.expiresAt === undefined ? Infinity : Date.parse(record.expiresAt));
