/**
 * The rate-limit rules a caller's object applies, as pure functions of an explicit clock
 * (docs/design/rate-limits.md#leases): fixed UTC windows, leases granted only while both windows have room, bans for
 * callers that keep going while refused. The object stores what these return.
 */
import { ANONYMOUS_LIMITS, type Limits } from "./plans";
import type { UsageChange } from "./usage-ledger";
import type { BanRule, LeaseAnswer, LeaseRequest, RefusalBatch, Unspent, Verdict, WindowReport } from "./protocol";

export const MINUTE_SECONDS = 60;
export const DAY_SECONDS = 86_400;

/** A lease is spent locally until this long after it is granted, and never past its minute window. */
export const LEASE_MS = 5_000;
/** A lease takes at most this share of what is left, so other isolates still find room. */
const LEASE_SHARE = 1 / 4;
/** A grant the object remembers, so a retried ask gets it again and an abandoned one gives it back. */
interface RecentGrant extends Unspent {
  id: string;
  /** When it was granted and until when it may be spent, Unix ms on the object's clock. */
  at: number;
  expiresAt: number;
  /** What the isolate holds of it beyond the asking request's own admission (absent in older objects' grants). */
  held?: number;
  /** The isolate has handed back what it left of it (a settle named it): none of it is reserved any more. */
  handedBack?: true;
}

/** What one caller's account object keeps. Times are Unix seconds unless named otherwise. */
export interface LimiterState {
  minuteStart: number;
  /** Admissions granted in this minute window, spent or not yet. */
  minuteCount: number;
  dayStart: number;
  dayCount: number;
  refusedInARow: number;
  /** Exact, with a fraction: a ban lasts exactly BAN_SECONDS from the refusal that started it. */
  bannedUntil: number;
  /** When the streak last started over (a grant, a ban's end, an unban): refusals before it never count. */
  streakFrom?: number;
  /** Ids of the refusal batches counted last. */
  batches?: string[];
  /** The grants of the last GRANT_MEMORY_MS, oldest first. */
  grants?: RecentGrant[];
}

/** How many batch ids the object remembers to count each batch once. */
const BATCHES_REMEMBERED = 8;
/**
 * How long the object remembers a grant: an isolate retries within 2 s and names a lost ask with its next call, so
 * every retry finds its grant. One named later keeps its grant counted: under-admission, never over.
 */
const GRANT_MEMORY_MS = 2 * LEASE_MS;

export const windowStart = (nowSeconds: number, size: number) => Math.floor(nowSeconds / size) * size;

const secondsUntil = (moment: number, nowSeconds: number) => Math.max(1, Math.ceil(moment - nowSeconds));

/** The state as of `t`: windows rolled over, old grants forgotten, an ended ban cleared with its streak. */
function current(previous: LimiterState | undefined, t: number): LimiterState {
  const minuteStart = windowStart(t, MINUTE_SECONDS);
  const dayStart = windowStart(t, DAY_SECONDS);
  const now = t * 1000;
  const sameDay = previous?.dayStart === dayStart;
  const state: LimiterState = {
    minuteStart,
    minuteCount: previous?.minuteStart === minuteStart ? previous.minuteCount : 0,
    dayStart,
    dayCount: sameDay ? previous.dayCount : 0,
    refusedInARow: previous?.refusedInARow ?? 0,
    bannedUntil: previous?.bannedUntil ?? 0,
    streakFrom: previous?.streakFrom ?? 0,
    batches: previous?.batches ?? [],
    grants: (previous?.grants ?? []).filter((grant) => grant.at + GRANT_MEMORY_MS > now),
  };
  if (state.bannedUntil > 0 && state.bannedUntil <= t) {
    state.streakFrom = state.bannedUntil;
    state.bannedUntil = 0;
    state.refusedInARow = 0;
  }
  return state;
}

/** How many to grant: what is wanted, at most a share of what is left, at least one. */
function leaseSize(want: number, room: number): number {
  return Math.min(room, Math.max(1, Math.min(Math.floor(want), Math.floor(room * LEASE_SHARE))));
}

export interface DecideOptions {
  /** Admissions to grant at most, the request's own included (default 1). */
  want?: number;
  /** An isolate renewing its lease before it runs out: no client's request (default false). */
  speculative?: boolean;
  /** Remember the grant under this id (the ask's), for a retry and for an abandoned ask. */
  grantId?: string;
  /** Where the decision's usage change goes (a client's request only: speculative asks are nobody's request). */
  tally?: UsageChange[];
  /** Leave this request's refusal uncounted: the isolate counts it once the client has its 429. */
  deferRefusal?: boolean;
}

/**
 * Decides one request and, when admitted, grants up to `want` admissions counted in both windows. A refusal counts in
 * neither and adds to the streak (unless `deferRefusal`, but never the one that crosses the threshold); a ban's
 * requests do neither; a `speculative` refusal adds nothing.
 */
export function decide(
  previous: LimiterState | undefined,
  limits: Limits,
  ban: BanRule,
  now: number,
  options: DecideOptions = {},
): { state: LimiterState; verdict: LeaseAnswer } {
  const { want = 1, speculative = false } = options;
  const t = now / 1000;
  const state = current(previous, t);
  const answer = (verdict: Verdict, granted = 0, expiresAt = now) => leaseAnswer(state, verdict, granted, expiresAt);

  const count = (admitted: number, refused: number) =>
    options.tally?.push({ minuteStart: state.minuteStart, dayStart: state.dayStart, admitted, refused });
  if (state.bannedUntil > t) {
    if (!speculative) count(0, 1);
    return { state, verdict: answer(banVerdict(state, limits, now)) };
  }

  const minuteRoom = limits.perMinute - state.minuteCount;
  const dayRoom = limits.perDay - state.dayCount;
  if (minuteRoom > 0 && dayRoom > 0) {
    const granted = leaseSize(want, Math.min(minuteRoom, dayRoom));
    const expiresAt = Math.min(now + LEASE_MS, (state.minuteStart + MINUTE_SECONDS) * 1000);
    state.minuteCount += granted;
    state.dayCount += granted;
    count(granted, 0);
    state.refusedInARow = 0;
    state.streakFrom = t;
    if (options.grantId !== undefined) {
      const grant = {
        id: options.grantId,
        minuteStart: state.minuteStart,
        dayStart: state.dayStart,
        count: granted,
        at: now,
        expiresAt,
        held: granted - (speculative ? 0 : 1),
      };
      state.grants = [...state.grants!, grant];
    }
    const reports = windowReports(state, limits);
    return {
      state,
      verdict: answer({ outcome: "admitted", now, ...reports, reported: quieterWindow(reports) }, granted, expiresAt),
    };
  }

  const counted = !speculative && (!options.deferRefusal || state.refusedInARow + 1 > ban.threshold);
  if (counted) state.refusedInARow += 1;
  // The history counts the refusal the object decided, deferred or not: the deferral is the streak's.
  if (!speculative) count(0, 1);
  if (state.refusedInARow > ban.threshold) {
    state.bannedUntil = t + ban.seconds;
    return { state, verdict: answer(banVerdict(state, limits, now)) };
  }
  const verdict = answer(refusal(state, limits, now, dayRoom <= 0));
  return { state, verdict: !speculative && options.deferRefusal ? { ...verdict, refusalDeferred: true } : verdict };
}

/**
 * One lease request as the object takes it: lost asks give their grants back, the isolate's refusals are counted, a key
 * the account refuses is refused without touching the windows, a retried ask gets its grant again uncounted, and the
 * rest is decide().
 */
export function acquire(
  previous: LimiterState | undefined,
  request: LeaseRequest,
  now: number,
  tally: UsageChange[] = [],
  account: { limits?: Limits; keyRefused?: boolean } = {},
): { state: LimiterState; verdict: LeaseAnswer } {
  const limits = account.limits ?? request.limits ?? ANONYMOUS_LIMITS;
  const keyRefused = account.keyRefused ?? false;
  const state = settle(previous, [], request.refusals, request.ban, now, request.abandoned, tally);
  if (keyRefused) return { state, verdict: leaseAnswer(state, refusal(state, limits, now, false)) };
  const repeated = request.id === undefined ? undefined : state.grants!.find((grant) => grant.id === request.id);
  if (repeated && repeated.minuteStart === state.minuteStart && repeated.expiresAt > now) {
    // The first answer's grant, in the windows it was granted in; nothing counted again, its expiry read from now.
    const reports = windowReports(state, limits);
    const verdict: Verdict = { outcome: "admitted", now, ...reports, reported: quieterWindow(reports) };
    return { state, verdict: leaseAnswer(state, verdict, repeated.count, repeated.expiresAt) };
  }
  if (repeated) {
    // Its minute or lease passed before the isolate heard of it: it goes back, and the ask is decided afresh, so
    // nothing is ever handed back to a window it was not counted in.
    state.grants = state.grants!.filter((grant) => grant !== repeated);
    takeBack(state, [repeated], tally);
  }
  return decide(state, limits, request.ban, now, {
    want: request.want,
    speculative: request.speculative,
    grantId: request.id,
    deferRefusal: request.deferRefusal,
    tally,
  });
}

/**
 * Takes back what isolates did not spend (in still-current windows) and what lost asks were granted, and counts
 * refusals isolates answered. Refusals from before the streak started over, or during a ban, do not count.
 */
export function settle(
  previous: LimiterState | undefined,
  unspent: readonly Unspent[],
  refusals: RefusalBatch | undefined,
  ban: BanRule,
  now: number,
  abandoned: readonly string[] = [],
  tally: UsageChange[] = [],
): LimiterState {
  const t = now / 1000;
  const state = current(previous, t);
  const lost = state.grants!.filter((grant) => abandoned.includes(grant.id));
  if (lost.length > 0) state.grants = state.grants!.filter((grant) => !abandoned.includes(grant.id));
  takeBack(state, [...unspent, ...lost], tally);
  const handedBack = unspent.flatMap((lease) => (lease.grantId === undefined ? [] : [lease.grantId]));
  if (handedBack.length > 0)
    state.grants = state.grants!.map((grant) =>
      handedBack.includes(grant.id) ? { ...grant, handedBack: true as const } : grant,
    );
  if (!refusals || state.batches!.includes(refusals.id)) return state;
  state.batches = [...state.batches!, refusals.id].slice(-BATCHES_REMEMBERED);
  for (const [minuteStart, count] of refusals.answered ?? []) {
    tally.push({ minuteStart, dayStart: windowStart(minuteStart, DAY_SECONDS), admitted: 0, refused: count });
  }
  if (refusals.count > 0 && state.bannedUntil <= t && refusals.since / 1000 >= state.streakFrom!) {
    state.refusedInARow += refusals.count;
    if (state.refusedInARow > ban.threshold) state.bannedUntil = t + ban.seconds;
  }
  return state;
}

/** Uncounts unspent admissions in their own still-current windows, and from the history's minute and day. */
function takeBack(state: LimiterState, leases: readonly Unspent[], tally: UsageChange[]): void {
  for (const lease of leases) {
    if (lease.count > 0)
      tally.push({ minuteStart: lease.minuteStart, dayStart: lease.dayStart, admitted: -lease.count, refused: 0 });
    if (lease.minuteStart === state.minuteStart) state.minuteCount = Math.max(0, state.minuteCount - lease.count);
    if (lease.dayStart === state.dayStart) state.dayCount = Math.max(0, state.dayCount - lease.count);
  }
}

/** Admissions isolates may still spend or hand back: the usage history's `reserved`. */
export function reservedGrants(state: LimiterState | undefined, now: number): Unspent[] {
  return (state?.grants ?? [])
    .filter((grant) => !grant.handedBack && grant.expiresAt > now && (grant.held ?? grant.count) > 0)
    .map(({ minuteStart, dayStart, count, held }) => ({ minuteStart, dayStart, count: held ?? count }));
}

/** What the operator API reports of an account: both windows' counts, streak, ban, and the keys it refuses. */
export interface Usage {
  minute: { count: number; reset: number };
  day: { count: number; reset: number };
  refusedInARow: number;
  /** Exact end of the ban, Unix seconds; 0 when none. */
  bannedUntil: number;
  revoked: string[];
}

export function usageOf(previous: LimiterState | undefined, now: number, refusedKeys: string[] = []): Usage {
  const state = current(previous, now / 1000);
  return {
    minute: { count: state.minuteCount, reset: state.minuteStart + MINUTE_SECONDS },
    day: { count: state.dayCount, reset: state.dayStart + DAY_SECONDS },
    refusedInARow: state.refusedInARow,
    bannedUntil: state.bannedUntil,
    revoked: refusedKeys,
  };
}

/** Ends a ban now and starts the streak over: refusals answered before now never count toward the next ban. */
export function unban(previous: LimiterState | undefined, now: number): LimiterState {
  return { ...current(previous, now / 1000), bannedUntil: 0, refusedInARow: 0, streakFrom: now / 1000 };
}

/** Lifts every refusal now: the ban ends as unban() ends it, and the minute and day start over with nothing counted. */
export function forgive(previous: LimiterState | undefined, now: number): LimiterState {
  return { ...unban(previous, now), minuteCount: 0, dayCount: 0 };
}

function leaseAnswer(state: LimiterState, verdict: Verdict, granted = 0, expiresAt = verdict.now): LeaseAnswer {
  return {
    ...verdict,
    granted,
    expiresAt,
    refusedInARow: state.refusedInARow,
    banEnds: state.bannedUntil,
  };
}

function windowReports(state: LimiterState, limits: Limits): { minute: WindowReport; day: WindowReport } {
  return {
    minute: report("minute", limits.perMinute, MINUTE_SECONDS, state.minuteCount, state.minuteStart),
    day: report("day", limits.perDay, DAY_SECONDS, state.dayCount, state.dayStart),
  };
}

function report(name: WindowReport["name"], limit: number, size: number, count: number, start: number): WindowReport {
  return { name, limit, size, remaining: Math.max(0, limit - count), reset: start + size };
}

/** The window with fewer requests left; on a tie the one that resets later. */
export function quieterWindow(reports: { minute: WindowReport; day: WindowReport }): WindowReport["name"] {
  const { minute, day } = reports;
  if (minute.remaining !== day.remaining) return minute.remaining < day.remaining ? "minute" : "day";
  return minute.reset > day.reset ? "minute" : "day";
}

function refusal(state: LimiterState, limits: Limits, now: number, dayFull: boolean): Verdict {
  const reports = windowReports(state, limits);
  // With both windows full, the later reset is the one that must pass.
  const refusing: WindowReport["name"] = dayFull ? "day" : "minute";
  return {
    outcome: "limited",
    now,
    ...reports,
    reported: refusing,
    retryAfter: secondsUntil(reports[refusing].reset, now / 1000),
  };
}

function banVerdict(state: LimiterState, limits: Limits, now: number): Verdict {
  const reports = windowReports(state, limits);
  return {
    outcome: "banned",
    now,
    ...reports,
    reported: quieterWindow(reports),
    retryAfter: secondsUntil(state.bannedUntil, now / 1000),
    // Headers carry whole seconds: the first second at which the ban is over.
    bannedUntil: Math.ceil(state.bannedUntil),
  };
}

/** When this state stops mattering, in Unix seconds: the day window is over, and any ban has ended. */
export function expiresAt(state: LimiterState): number {
  return Math.ceil(Math.max(state.dayStart + DAY_SECONDS, state.bannedUntil));
}
