/**
 * The rate-limit rules as pure functions of an explicit clock (CONTRACT
 * section 5): fixed UTC-aligned windows, admit only when both have room, bans
 * for callers that keep going while refused. The Durable Object only stores
 * what these return.
 */
import type { Limits } from "../schemas/api-key";

export const MINUTE_SECONDS = 60;
export const DAY_SECONDS = 86_400;

export interface BanRule {
  /** A ban starts once more than this many requests in a row were refused. */
  threshold: number;
  seconds: number;
}

/** What one caller's object keeps. Times are Unix seconds. */
export interface LimiterState {
  minuteStart: number;
  minuteCount: number;
  dayStart: number;
  dayCount: number;
  refusedInARow: number;
  /** Exact, with a fraction: a ban lasts exactly BAN_SECONDS from the refusal that started it. */
  bannedUntil: number;
}

export type WindowName = "minute" | "day";

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
  /** The window the headers describe (CONTRACT section 5). */
  reported: WindowName;
  /** For refusals: whole seconds until a retry can succeed. */
  retryAfter?: number;
  /** For bans: Unix seconds at which the ban ends. */
  bannedUntil?: number;
}

export const windowStart = (nowSeconds: number, size: number) => Math.floor(nowSeconds / size) * size;

const secondsUntil = (moment: number, nowSeconds: number) => Math.max(1, Math.ceil(moment - nowSeconds));

/**
 * Decides one request. An admitted request counts once in both windows; a
 * refused one in neither; requests during a ban neither count nor extend it.
 */
export function decide(
  previous: LimiterState | undefined,
  limits: Limits,
  ban: BanRule,
  now: number,
): { state: LimiterState; verdict: Verdict } {
  const t = now / 1000;
  const minuteStart = windowStart(t, MINUTE_SECONDS);
  const dayStart = windowStart(t, DAY_SECONDS);
  const state: LimiterState = {
    minuteStart,
    minuteCount: previous?.minuteStart === minuteStart ? previous.minuteCount : 0,
    dayStart,
    dayCount: previous?.dayStart === dayStart ? previous.dayCount : 0,
    refusedInARow: previous?.refusedInARow ?? 0,
    bannedUntil: previous?.bannedUntil ?? 0,
  };

  if (state.bannedUntil > t) {
    return { state, verdict: banVerdict(state, limits, now) };
  }
  if (state.bannedUntil > 0) {
    // The ban is over: a clean slate for the streak.
    state.bannedUntil = 0;
    state.refusedInARow = 0;
  }

  const minuteFull = state.minuteCount >= limits.perMinute;
  const dayFull = state.dayCount >= limits.perDay;
  if (!minuteFull && !dayFull) {
    state.minuteCount += 1;
    state.dayCount += 1;
    state.refusedInARow = 0;
    const reports = windowReports(state, limits);
    return { state, verdict: { outcome: "admitted", now, ...reports, reported: quieterWindow(reports) } };
  }

  state.refusedInARow += 1;
  if (state.refusedInARow > ban.threshold) {
    state.bannedUntil = t + ban.seconds;
    return { state, verdict: banVerdict(state, limits, now) };
  }
  const reports = windowReports(state, limits);
  // With both windows full, the later reset is the one that must pass.
  const refusing: WindowName = dayFull ? "day" : "minute";
  return {
    state,
    verdict: {
      outcome: "limited",
      now,
      ...reports,
      reported: refusing,
      retryAfter: secondsUntil(reports[refusing].reset, t),
    },
  };
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
