import { describe, expect, it } from "vitest";
import { limitsFor } from "../../../src/account/key-record";
import { ANONYMOUS_LIMITS, PLAN_LIMITS } from "../../../src/account/plans";
import {
  absorbAnswer,
  abandonAsk,
  decideLocally,
  leaseRequest,
  newLeaseBook,
  takeExpired,
} from "../../../src/account/lease-book";
import {
  acquire,
  decide,
  expiresAt,
  quieterWindow,
  settle,
  unban,
  usageOf,
  windowStart,
  type LimiterState,
} from "../../../src/account/policy";
import type { LeaseRequest } from "../../../src/account/protocol";

const ban = { threshold: 3, seconds: 100 };
const limits = { perMinute: 2, perDay: 5 };
const DAY = Date.UTC(2030, 0, 1) / 1000;
const ms = (seconds: number) => (DAY + seconds) * 1000;

/** Runs a sequence of requests at the given second offsets and returns the outcomes and last state. */
function run(times: number[], start?: LimiterState, lim = limits) {
  let state = start;
  const outcomes: string[] = [];
  for (const time of times) {
    const result = decide(state, lim, ban, ms(time));
    state = result.state;
    outcomes.push(result.verdict.outcome);
  }
  return { outcomes, state: state! };
}

describe("windowStart", () => {
  it("aligns minutes and days to UTC", () => {
    expect(windowStart(DAY + 59.9, 60)).toBe(DAY);
    expect(windowStart(DAY + 60, 60)).toBe(DAY + 60);
    expect(windowStart(DAY + 86399, 86400)).toBe(DAY);
    expect(windowStart(DAY + 86400, 86400)).toBe(DAY + 86400);
  });
});

describe("decide", () => {
  it("admits while both windows have room and counts an admitted request in both", () => {
    const { outcomes, state } = run([0, 1, 2]);
    expect(outcomes).toEqual(["admitted", "admitted", "limited"]);
    expect(state).toMatchObject({ minuteCount: 2, dayCount: 2, refusedInARow: 1 });
  });

  it("starts a new minute at the boundary, keeping the day's count", () => {
    const { outcomes, state } = run([0, 1, 59.999, 60]);
    expect(outcomes).toEqual(["admitted", "admitted", "limited", "admitted"]);
    expect(state).toMatchObject({ minuteStart: DAY + 60, minuteCount: 1, dayCount: 3 });
  });

  it("refuses on the day window across minutes, until UTC midnight", () => {
    const { outcomes } = run([0, 1, 60, 61, 120, 180, 86399, 86400]);
    expect(outcomes).toEqual([
      "admitted",
      "admitted",
      "admitted",
      "admitted",
      "admitted",
      "limited",
      "limited",
      "admitted",
    ]);
  });

  it("gives Retry-After to the end of the refusing window, at least 1 second", () => {
    const minute = decide(run([10, 11]).state, limits, ban, ms(12.5)).verdict;
    expect(minute).toMatchObject({ outcome: "limited", reported: "minute", retryAfter: 48 });
    const lastMoment = decide(run([10, 11]).state, limits, ban, ms(59.9)).verdict;
    expect(lastMoment.retryAfter).toBe(1);
    const day = decide(run([0, 1, 60, 61, 120]).state, limits, ban, ms(180)).verdict;
    expect(day).toMatchObject({ outcome: "limited", reported: "day", retryAfter: 86400 - 180 });
  });

  it("names the day when both windows are full, since it resets later", () => {
    const both = decide(run([0, 1]).state, { perMinute: 2, perDay: 2 }, ban, ms(2)).verdict;
    expect(both).toMatchObject({ reported: "day", retryAfter: 86398 });
  });

  it("bans once more than the threshold were refused in a row, and the ban neither counts nor extends", () => {
    const { outcomes, state } = run([0, 1, 2, 3, 4, 5, 6, 50]);
    expect(outcomes).toEqual(["admitted", "admitted", "limited", "limited", "limited", "banned", "banned", "banned"]);
    expect(state.bannedUntil).toBe(DAY + 5 + 100);
    expect(state).toMatchObject({ minuteCount: 2, dayCount: 2 });
    const during = decide(state, limits, ban, ms(50)).verdict;
    expect(during).toMatchObject({ outcome: "banned", retryAfter: 55, bannedUntil: DAY + 105 });
  });

  it("bans for exactly the ban's seconds when it starts mid-second", () => {
    const { state } = run([0, 1, 2, 3, 4, 5.3]);
    expect(state.bannedUntil).toBeCloseTo(DAY + 105.3, 6);
    const started = decide(run([0, 1, 2, 3, 4]).state, limits, ban, ms(5.3)).verdict;
    expect(started).toMatchObject({ outcome: "banned", retryAfter: 100, bannedUntil: DAY + 106 });
    expect(decide(state, limits, ban, ms(105.2)).verdict.outcome).toBe("banned");
    expect(decide(state, limits, ban, ms(105.3)).verdict.outcome).toBe("admitted");
  });

  it("ends a ban on time with a clean streak", () => {
    const banned = run([0, 1, 2, 3, 4, 5]).state;
    const { outcomes, state } = run([105, 106, 107], banned);
    expect(outcomes).toEqual(["admitted", "admitted", "limited"]);
    expect(state).toMatchObject({ bannedUntil: 0, refusedInARow: 1 });
  });

  it("resets the streak on an admitted request", () => {
    const { outcomes } = run([0, 1, 2, 3, 4, 60, 61, 62, 63, 64]);
    expect(outcomes).not.toContain("banned");
  });

  it("starts fresh counts on a later day", () => {
    const yesterday = run([0, 1]).state;
    const { state } = run([86400 * 3], yesterday);
    expect(state).toMatchObject({ minuteCount: 1, dayCount: 1, dayStart: DAY + 86400 * 3 });
  });
});

describe("quieterWindow", () => {
  const report = (name: "minute" | "day", remaining: number, reset: number) => ({
    name,
    limit: 9,
    size: 1,
    remaining,
    reset,
  });
  it("prefers fewer remaining, then the later reset", () => {
    expect(quieterWindow({ minute: report("minute", 1, 60), day: report("day", 5, 86400) })).toBe("minute");
    expect(quieterWindow({ minute: report("minute", 5, 60), day: report("day", 1, 86400) })).toBe("day");
    expect(quieterWindow({ minute: report("minute", 3, 60), day: report("day", 3, 86400) })).toBe("day");
  });
});

describe("expiresAt", () => {
  it("is the end of the day, or of a ban that outlasts it", () => {
    const state = run([0]).state;
    expect(expiresAt(state)).toBe(DAY + 86400);
    expect(expiresAt({ ...state, bannedUntil: DAY + 90000 })).toBe(DAY + 90000);
  });
});

describe("acquire: one lease request as the object takes it", () => {
  const request = (fields: Partial<LeaseRequest> = {}): LeaseRequest => ({
    limits: { perMinute: 100, perDay: 1000 },
    ban,
    want: 10,
    speculative: false,
    deferRefusal: true,
    ...fields,
  });

  it("answers a retried ask (same id) with its first grant, counted once", () => {
    const first = acquire(undefined, request({ id: "a" }), ms(1));
    const retried = acquire(first.state, request({ id: "a" }), ms(2));
    expect(first.verdict.granted).toBeGreaterThan(1);
    // Its expiry as the first answer set it, read from now: the isolate never spends it longer than the object meant.
    expect(retried.verdict).toMatchObject({
      granted: first.verdict.granted,
      expiresAt: first.verdict.expiresAt,
      now: ms(2),
    });
    expect(usageOf(retried.state, ms(2)).minute.count).toBe(first.verdict.granted);
    expect(usageOf(acquire(retried.state, request({ id: "b" }), ms(3)).state, ms(3)).minute.count).toBeGreaterThan(
      first.verdict.granted,
    );
  });

  it("answers a retry that arrives after its minute turned in the windows of now, and never takes one minute's grant from the next", () => {
    const wide = { perMinute: 100, perDay: 10_000 };
    const first = acquire(undefined, request({ id: "late", limits: wide, want: 40 }), ms(59.5));
    expect(first.verdict.granted).toBe(25);
    // Other isolates fill the next minute while the first answer is lost.
    let state = first.state;
    for (let i = 0; usageOf(state, ms(60.1)).minute.count < 100; i++)
      state = acquire(state, request({ id: `other-${i}`, limits: wide, want: 100 }), ms(60.1)).state;
    const retried = acquire(state, request({ id: "late", limits: wide, want: 40 }), ms(60.6));
    expect(retried.verdict).toMatchObject({ outcome: "limited", granted: 0 });
    // The isolate reads the answer and hands back whatever it left unspent: minute 60 still counts exactly its 100.
    const book = newLeaseBook();
    absorbAnswer(book, retried.verdict, ms(60.6), true, {}, ms(59.5));
    const after = settle(retried.state, takeExpired(book, ms(70)), undefined, ban, ms(61));
    expect(usageOf(after, ms(61)).minute.count).toBe(100);
    // The lost grant went back to the day too: the day counts minute 60 alone.
    expect(usageOf(after, ms(61)).day.count).toBe(100);
  });

  it("decides a retry afresh, giving its first grant back, once that grant's lease has run out", () => {
    const first = acquire(undefined, request({ id: "a", want: 40 }), ms(1));
    const retried = acquire(first.state, request({ id: "a", want: 40 }), ms(1) + 5_001);
    expect(retried.verdict.expiresAt).toBeGreaterThan(ms(1) + 5_001);
    expect(usageOf(retried.state, ms(7)).minute.count).toBe(retried.verdict.granted);
  });

  it("finds a retried ask's grant however many asks of the account are in flight", () => {
    const wide = { perMinute: 100_000, perDay: 1_000_000 };
    let state = acquire(undefined, request({ id: "first", limits: wide, want: 1 }), ms(1)).state;
    for (let i = 0; i < 40; i++)
      state = acquire(state, request({ id: `busy-${i}`, limits: wide, want: 1 }), ms(1.5)).state;
    const counted = usageOf(state, ms(2)).minute.count;
    const retried = acquire(state, request({ id: "first", limits: wide, want: 1 }), ms(2.5));
    expect(retried.verdict.granted).toBe(1);
    expect(usageOf(retried.state, ms(2.5)).minute.count).toBe(counted);
  });

  it("takes back what an abandoned ask was granted, once", () => {
    const lost = acquire(undefined, request({ id: "a" }), ms(1));
    const next = acquire(lost.state, request({ id: "b", abandoned: ["a"] }), ms(2));
    expect(usageOf(next.state, ms(2)).minute.count).toBe(next.verdict.granted);
    const again = settle(next.state, [], undefined, ban, ms(3), ["a"]);
    expect(usageOf(again, ms(3)).minute.count).toBe(next.verdict.granted);
  });

  it("leaves a deferred refusal to the isolate, but counts the one that crosses the threshold, so a ban starts on time", () => {
    const full = run([0, 1]).state;
    const refused = acquire(full, request({ id: "r", limits }), ms(2));
    expect(refused.verdict).toMatchObject({ outcome: "limited", refusalDeferred: true, refusedInARow: 0 });
    const delivered = { ...full, refusedInARow: ban.threshold };
    expect(acquire(delivered, request({ id: "x", limits }), ms(2)).verdict).toMatchObject({ outcome: "banned" });
    // An isolate from before deferred refusals: counted at once, as it expects.
    expect(acquire(full, request({ limits, deferRefusal: undefined }), ms(2)).verdict).toMatchObject({
      outcome: "limited",
      refusedInARow: 1,
    });
  });

  it("refuses a key its account refuses without counting it or touching the streak", () => {
    const { state, verdict } = acquire(run([0]).state, request({ id: "a", keyId: "key_revoked", limits }), ms(2), [], {
      keyRefused: true,
    });
    expect(verdict).toMatchObject({ granted: 0 });
    expect(usageOf(state, ms(2))).toMatchObject({ minute: { count: 1 }, refusedInARow: 0 });
  });

  it("decides by the account's limits, whatever limits an ask carries", () => {
    const business = { perMinute: 1000, perDay: 100_000 };
    const free = { perMinute: 60, perDay: 1000 };
    expect(acquire(undefined, request({ id: "a", limits: free }), ms(1)).verdict.minute.limit).toBe(60);
    const account = acquire(undefined, request({ id: "b", limits: free }), ms(1), [], { limits: business });
    expect(account.verdict.minute.limit).toBe(1000);
  });

  it("keeps nothing past its day or its ban: a key's standing is its account's, never the windows'", () => {
    const state = run([0]).state;
    expect(expiresAt(state)).toBe(DAY + 86_400);
    expect(Object.keys(state).sort()).toEqual(
      [
        "batches",
        "bannedUntil",
        "dayCount",
        "dayStart",
        "grants",
        "minuteCount",
        "minuteStart",
        "refusedInARow",
        "streakFrom",
      ].sort(),
    );
  });
});

describe("refusal batches and the streak", () => {
  const batch = (since: number, id: string) => ({ count: 5, since: ms(since), id });

  it("never counts refusals answered before a ban ended toward the next streak", () => {
    const banned = run([0, 1, 2, 3, 4, 5]).state;
    expect(banned.bannedUntil).toBeGreaterThan(0);
    const afterBan = settle(banned, [], batch(50, "late"), ban, ms(200));
    expect(usageOf(afterBan, ms(200)).refusedInARow).toBe(0);
  });

  it("never counts refusals answered before an unban", () => {
    const unbanned = unban(run([0, 1, 2, 3, 4, 5]).state, ms(10));
    expect(usageOf(settle(unbanned, [], batch(9, "before"), ban, ms(11)), ms(11)).refusedInARow).toBe(0);
    expect(usageOf(settle(unbanned, [], batch(10.5, "after"), ban, ms(11)), ms(11)).refusedInARow).toBe(5);
  });
});

describe("the isolate's reading of an answer", () => {
  it("reads a lease's expiry as a duration from when the ask was sent, whatever the isolate's clock says", () => {
    const answer = decide(undefined, { perMinute: 100, perDay: 1000 }, ban, ms(10), { want: 20 }).verdict;
    const book = newLeaseBook();
    // This isolate's clock is 2 s behind the object's: the lease ends 5 s after the ask by its own clock.
    const sentAt = ms(8);
    absorbAnswer(book, answer, sentAt + 30, true, {}, sentAt);
    expect(book.leases[0]!.expiresAt).toBe(sentAt + 5_000);
  });

  it("holds the account's word on a key for a lease's length, a refusal of it for good, and decides nothing without it", () => {
    const book = newLeaseBook();
    const live = {
      standing: "live" as const,
      record: { id: "key_live", name: "", plan: "pro" as const, createdAt: "", scopes: [] },
    };
    const granted = {
      ...decide(undefined, { perMinute: 100, perDay: 1000 }, ban, ms(10), { want: 20 }).verdict,
      key: live,
    };
    absorbAnswer(book, granted, ms(10), true, { keyId: "key_live", id: "a" }, ms(10));
    expect(decideLocally(book, ban, ms(14), "key_live")).toMatchObject({ outcome: "admitted", key: live });
    // Another key of the account, which the account has not spoken of here: asked about.
    expect(decideLocally(book, ban, ms(11), "key_other")).toBeUndefined();
    expect(decideLocally(book, ban, ms(15.1), "key_live")).toBeUndefined();
    const refused = { ...granted, outcome: "limited" as const, granted: 0, key: { standing: "revoked" as const } };
    absorbAnswer(book, refused, ms(20), true, { keyId: "key_gone", id: "b" }, ms(20));
    expect(decideLocally(book, ban, ms(3_600), "key_gone")).toMatchObject({ key: { standing: "revoked" } });
  });

  it("counts a refusal the object deferred once it answers the client, and names a lost ask in its next request", () => {
    const book = newLeaseBook();
    const asker = { limits, ban };
    const lost = leaseRequest(book, asker, 0, ms(1), false, "lost");
    abandonAsk(book, lost);
    const next = leaseRequest(book, asker, 0, ms(2), false, "next");
    expect(next).toMatchObject({ id: "next", abandoned: ["lost"], deferRefusal: true });
    const refused = acquire(run([0, 1]).state, next, ms(2)).verdict;
    absorbAnswer(book, refused, ms(2), true, next, ms(2));
    expect(book.abandoned).toEqual([]);
    expect(book.pending.count).toBe(1);
  });
});

describe("plan limits", () => {
  it("matches the published table", () => {
    expect(PLAN_LIMITS).toEqual({
      free: { perMinute: 60, perDay: 1000 },
      pro: { perMinute: 300, perDay: 10000 },
      business: { perMinute: 1000, perDay: 100000 },
    });
    expect(ANONYMOUS_LIMITS).toEqual(PLAN_LIMITS.free);
  });

  it("takes a key's own limits first, and refuses an enterprise key without them", () => {
    const key = { id: "key_0123456789abcdef", name: "", createdAt: "" };
    expect(limitsFor({ ...key, plan: "pro" })).toEqual(PLAN_LIMITS.pro);
    expect(limitsFor({ ...key, plan: "pro", limits: { perMinute: 1, perDay: 2 } })).toEqual({
      perMinute: 1,
      perDay: 2,
    });
    expect(limitsFor({ ...key, plan: "enterprise", limits: { perMinute: 7, perDay: 8 } })).toEqual({
      perMinute: 7,
      perDay: 8,
    });
    expect(() => limitsFor({ ...key, plan: "enterprise" })).toThrow(/no limits/);
  });
});
