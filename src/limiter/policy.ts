/**
 * The rate-limit rules the caller's Durable Object applies, as pure functions
 * of an explicit clock (README, "Rate limits"): fixed UTC-aligned windows,
 * admissions granted in leases only while both windows have room, bans for
 * callers that keep going while refused. The object only stores what these
 * return; the worker isolates spend the leases (lease-book.ts).
 */
import type { Limits } from "../keys/schemas";

export const MINUTE_SECONDS = 60;
export const DAY_SECONDS = 86_400;

/** A lease is spent locally until this long after it is granted, and never past its minute window. */
export const LEASE_MS = 5_000;
/** A lease takes at most this share of what is left, so other isolates still find room. */
const LEASE_SHARE = 1 / 4;

export interface BanRule {
  /** A ban starts once more than this many requests in a row were refused. */
  threshold: number;
  seconds: number;
}

/** What one caller's object keeps. Times are Unix seconds. */
export interface LimiterState {
  minuteStart: number;
  /** Admissions granted in this minute window, spent or not yet. */
  minuteCount: number;
  dayStart: number;
  dayCount: number;
  refusedInARow: number;
  /** Exact, with a fraction: a ban lasts exactly BAN_SECONDS from the refusal that started it. */
  bannedUntil: number;
  /** When admissions were last granted: refusals reported from before it were interrupted by them. */
  grantedAt?: number;
  /** Ids of the refusal batches counted last. */
  batches?: string[];
  /** Keys of this budget revoked through the operator API: refused within a lease's expiry, before KV has spread the news. */
  revoked?: string[];
  /**
   * Limits set through the operator API (a plan change): used instead of the
   * ones isolates send until `until` (Unix ms), by when KV has spread them.
   */
  override?: { limits: Limits; until: number };
}

type WindowName = "minute" | "day";

export interface WindowReport {
  name: WindowName;
  limit: number;
  size: number;
  remaining: number;
  /** Unix seconds at which this window ends. */
  reset: number;
}

export interface Verdict {
  outcome: "admitted" | "limited" | "banned";
  /** The decision's clock, in Unix milliseconds, so headers agree with it exactly. */
  now: number;
  minute: WindowReport;
  day: WindowReport;
  /** The window the headers describe (README, "Rate limits"). */
  reported: WindowName;
  /** For refusals: whole seconds until a retry can succeed. */
  retryAfter?: number;
  /** For bans: Unix seconds at which the ban ends (the first whole second after it). */
  bannedUntil?: number;
}

/** The object's answer to a lease request: the verdict for the asking request, and what the isolate may spend after it. */
export interface LeaseAnswer extends Verdict {
  /** Admissions granted, the asking request's own included (0 when refused). */
  granted: number;
  /** Unix milliseconds after which the isolate must not spend the grant. */
  expiresAt: number;
  /** The object's refusals in a row after this answer. */
  refusedInARow: number;
  /** Exact end of a ban, Unix seconds (0 when none). */
  banEnds: number;
  /** Keys of this budget revoked through the operator API. */
  revoked: string[];
}

/** Admissions an isolate did not spend, handed back once its lease expired. */
export interface Unspent {
  minuteStart: number;
  dayStart: number;
  count: number;
}

/** Refusals an isolate answered itself, counted in the object later. */
export interface RefusalBatch {
  count: number;
  /** Unix milliseconds of the first of them. */
  since: number;
  /** Unique per batch: a batch sent again (a retried call) is counted once. */
  id: string;
}

/** How many batch ids the object remembers to count each batch once. */
const BATCHES_REMEMBERED = 8;

export const windowStart = (nowSeconds: number, size: number) => Math.floor(nowSeconds / size) * size;

const secondsUntil = (moment: number, nowSeconds: number) => Math.max(1, Math.ceil(moment - nowSeconds));

/** The state as of `t`: windows rolled over, an ended ban cleared with its streak. */
function current(previous: LimiterState | undefined, t: number): LimiterState {
  const minuteStart = windowStart(t, MINUTE_SECONDS);
  const dayStart = windowStart(t, DAY_SECONDS);
  const state: LimiterState = {
    minuteStart,
    minuteCount: previous?.minuteStart === minuteStart ? previous.minuteCount : 0,
    dayStart,
    dayCount: previous?.dayStart === dayStart ? previous.dayCount : 0,
    refusedInARow: previous?.refusedInARow ?? 0,
    bannedUntil: previous?.bannedUntil ?? 0,
    grantedAt: previous?.grantedAt ?? 0,
    batches: previous?.batches ?? [],
    ...(previous?.revoked && { revoked: previous.revoked }),
    ...(previous?.override && previous.override.until > t * 1000 && { override: previous.override }),
  };
  if (state.bannedUntil > 0 && state.bannedUntil <= t) {
    state.bannedUntil = 0;
    state.refusedInARow = 0;
  }
  return state;
}

/**
 * How many admissions to grant: what the isolate wants, at most a share of
 * what is left, at least one. Near the limit that is one, so the last
 * admissions of a window are decided one at a time, here.
 */
function leaseSize(want: number, room: number): number {
  return Math.min(room, Math.max(1, Math.min(Math.floor(want), Math.floor(room * LEASE_SHARE))));
}

/**
 * Decides one request and, when it is admitted, grants up to `want`
 * admissions (its own included), counted in both windows at once. A refused
 * request counts in neither and adds to the streak that leads to a ban;
 * requests during a ban neither count nor extend it. A `speculative` request
 * (an isolate renewing its lease before it runs out) is no client's request:
 * refusing it adds nothing to the streak.
 */
export function decide(
  previous: LimiterState | undefined,
  limits: Limits,
  ban: BanRule,
  now: number,
  want = 1,
  speculative = false,
): { state: LimiterState; verdict: LeaseAnswer } {
  const t = now / 1000;
  const state = current(previous, t);
  limits = state.override?.limits ?? limits;
  const answer = (verdict: Verdict, granted = 0): LeaseAnswer => ({
    ...verdict,
    granted,
    expiresAt: granted > 0 ? Math.min(now + LEASE_MS, (state.minuteStart + MINUTE_SECONDS) * 1000) : now,
    refusedInARow: state.refusedInARow,
    banEnds: state.bannedUntil,
    revoked: state.revoked ?? [],
  });

  if (state.bannedUntil > t) return { state, verdict: answer(banVerdict(state, limits, now)) };

  const minuteRoom = limits.perMinute - state.minuteCount;
  const dayRoom = limits.perDay - state.dayCount;
  if (minuteRoom > 0 && dayRoom > 0) {
    const granted = leaseSize(want, Math.min(minuteRoom, dayRoom));
    state.minuteCount += granted;
    state.dayCount += granted;
    state.refusedInARow = 0;
    state.grantedAt = t;
    const reports = windowReports(state, limits);
    return { state, verdict: answer({ outcome: "admitted", now, ...reports, reported: quieterWindow(reports) }, granted) };
  }

  if (!speculative) state.refusedInARow += 1;
  if (state.refusedInARow > ban.threshold) {
    state.bannedUntil = t + ban.seconds;
    return { state, verdict: answer(banVerdict(state, limits, now)) };
  }
  return { state, verdict: answer(refusal(state, limits, now, dayRoom <= 0)) };
}

/**
 * Takes back what isolates did not spend (in the windows it was granted for,
 * if they are still current) and counts refusals they answered themselves.
 * Refusals from before the last grant were interrupted by an admission, so
 * they no longer count; during a ban refusals do not count at all.
 */
export function settle(
  previous: LimiterState | undefined,
  unspent: readonly Unspent[],
  refusals: RefusalBatch | undefined,
  ban: BanRule,
  now: number,
): LimiterState {
  const t = now / 1000;
  const state = current(previous, t);
  for (const lease of unspent) {
    if (lease.minuteStart === state.minuteStart) state.minuteCount = Math.max(0, state.minuteCount - lease.count);
    if (lease.dayStart === state.dayStart) state.dayCount = Math.max(0, state.dayCount - lease.count);
  }
  if (!refusals || state.batches!.includes(refusals.id)) return state;
  state.batches = [...state.batches!, refusals.id].slice(-BATCHES_REMEMBERED);
  if (refusals.count > 0 && state.bannedUntil <= t && refusals.since / 1000 >= state.grantedAt!) {
    state.refusedInARow += refusals.count;
    if (state.refusedInARow > ban.threshold) state.bannedUntil = t + ban.seconds;
  }
  return state;
}

/** What the operator API reports of a budget: its counts in both windows (grants included), streak, ban, revocations. */
export interface Usage {
  minute: { count: number; reset: number };
  day: { count: number; reset: number };
  refusedInARow: number;
  /** Exact end of the ban, Unix seconds; 0 when none. */
  bannedUntil: number;
  revoked: string[];
}

export function usageOf(previous: LimiterState | undefined, now: number): Usage {
  const state = current(previous, now / 1000);
  return {
    minute: { count: state.minuteCount, reset: state.minuteStart + MINUTE_SECONDS },
    day: { count: state.dayCount, reset: state.dayStart + DAY_SECONDS },
    refusedInARow: state.refusedInARow,
    bannedUntil: state.bannedUntil,
    revoked: state.revoked ?? [],
  };
}

/** Ends a ban now and clears the streak. */
export function unban(previous: LimiterState | undefined, now: number): LimiterState {
  return { ...current(previous, now / 1000), bannedUntil: 0, refusedInARow: 0 };
}

/** Limits from the operator API, in force for `forMs` (until every isolate sends them itself). */
export function overrideLimits(previous: LimiterState | undefined, limits: Limits, forMs: number, now: number): LimiterState {
  return { ...current(previous, now / 1000), override: { limits, until: now + forMs } };
}

/** Marks one key of this budget revoked: its next lease request is answered with the list. */
export function revokeKey(previous: LimiterState | undefined, keyId: string, now: number): LimiterState {
  const state = current(previous, now / 1000);
  return { ...state, revoked: [...new Set([...(state.revoked ?? []), keyId])] };
}

function windowReports(state: LimiterState, limits: Limits): { minute: WindowReport; day: WindowReport } {
  return {
    minute: report("minute", limits.perMinute, MINUTE_SECONDS, state.minuteCount, state.minuteStart),
    day: report("day", limits.perDay, DAY_SECONDS, state.dayCount, state.dayStart),
  };
}

function report(name: WindowName, limit: number, size: number, count: number, start: number): WindowReport {
  return { name, limit, size, remaining: Math.max(0, limit - count), reset: start + size };
}

/** The window with fewer requests left; on a tie the one that resets later. */
export function quieterWindow(reports: { minute: WindowReport; day: WindowReport }): WindowName {
  const { minute, day } = reports;
  if (minute.remaining !== day.remaining) return minute.remaining < day.remaining ? "minute" : "day";
  return minute.reset > day.reset ? "minute" : "day";
}

function refusal(state: LimiterState, limits: Limits, now: number, dayFull: boolean): Verdict {
  const reports = windowReports(state, limits);
  // With both windows full, the later reset is the one that must pass.
  const refusing: WindowName = dayFull ? "day" : "minute";
  return { outcome: "limited", now, ...reports, reported: refusing, retryAfter: secondsUntil(reports[refusing].reset, now / 1000) };
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

/** When this state stops mattering: the day window is over and any ban has ended. */
export function expiresAt(state: LimiterState): number {
  return Math.max(state.dayStart + DAY_SECONDS, Math.ceil(state.bannedUntil));
}
