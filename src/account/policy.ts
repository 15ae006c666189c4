/**
 * The rate-limit rules the caller's Durable Object applies, as pure functions
 * of an explicit clock (docs/design/rate-limits.md#leases): fixed UTC-aligned windows,
 * admissions granted in leases only while both windows have room, bans for
 * callers that keep going while refused. The object only stores what these
 * return; the worker isolates spend the leases (lease-book.ts).
 */
import type { Limits } from "./plans";
import type { UsageChange } from "./usage-ledger";
import type { BanRule, LeaseAnswer, LeaseRequest, RefusalBatch, Unspent, Verdict, WindowReport } from "./protocol";

export const MINUTE_SECONDS = 60;
export const DAY_SECONDS = 86_400;

/** A lease is spent locally until this long after it is granted, and never past its minute window. */
export const LEASE_MS = 5_000;
/** A lease takes at most this share of what is left, so other isolates still find room. */
const LEASE_SHARE = 1 / 4;
/**
 * How long a revocation, or limits the object learned, outlive the day they
 * were made in: KV's propagation (about 60 s), its edge cache (60 s) and the
 * isolates' key cache (5 s), with room to spare. By then every isolate reads
 * the same from KV (docs/operations.md#api-keys).
 */
export const KEEP_FOR_KV_MS = 600_000;

/** The budget's limits as the object knows them: the newest it has been shown. */
export interface BudgetLimits extends Limits {
  /** When they were set (Unix ms), as the key records or the operator API stamp them. */
  setAt: number;
  /** Kept at least until then (Unix ms), across the day boundary too. */
  keepUntil: number;
}

/** A grant the object remembers, so a retried ask gets it again and an abandoned one gives it back. */
interface RecentGrant extends Unspent {
  id: string;
  /** When it was granted and until when it may be spent, Unix ms on the object's clock. */
  at: number;
  expiresAt: number;
  /**
   * What the isolate holds of it beyond the asking request's own admission (absent in grants stored by older objects).
   */
  held?: number;
  /** The isolate has handed back what it left of it (a settle named it): none of it is reserved any more. */
  handedBack?: true;
}

/** What one caller's object keeps. Times are Unix seconds unless named otherwise. */
export interface LimiterState {
  minuteStart: number;
  /** Admissions granted in this minute window, spent or not yet. */
  minuteCount: number;
  dayStart: number;
  dayCount: number;
  refusedInARow: number;
  /** Exact, with a fraction: a ban lasts exactly BAN_SECONDS from the refusal that started it. */
  bannedUntil: number;
  /**
   * When the streak last started over (a grant, a ban's end, an unban):
   * refusals answered before it belong to an earlier streak and never count.
   */
  streakFrom?: number;
  /** Ids of the refusal batches counted last. */
  batches?: string[];
  /** The grants of the last GRANT_MEMORY_MS, oldest first. */
  grants?: RecentGrant[];
  /**
   * Keys of this budget revoked through the operator API: refused within a lease's expiry, before KV has spread the
   * news.
   */
  revoked?: string[];
  /** Unix ms until which `revoked` is kept. */
  revokedKeepUntil?: number;
  /**
   * Keys of this budget rotated away: each acts only on itself from its rotation on, and is refused from
   * `endsAt` (Unix ms, its grace's end) on, before KV has spread either (docs/design/rate-limits.md#key-state);
   * each kept until KV's propagation past its end (a week's grace at most: a budget keeps a week's rotations).
   */
  rotated?: { keyId: string; endsAt: number }[];
  /** Keys of this budget given an end by an update (`expiresAt`): refused from it on, before KV has spread it. */
  ending?: { keyId: string; endsAt: number }[];
  /**
   * Unix ms of the last revocation or rotation told: until KV has spread it, a budget that looks keyless in KV may not
   * be.
   */
  keysChangedAt?: number;
  limits?: BudgetLimits;
}

/** How many batch ids the object remembers to count each batch once. */
const BATCHES_REMEMBERED = 8;
/**
 * How long the object remembers a grant. An isolate retries an ask within two
 * of its limiter timeouts (2 s) and names a lost one with its next call, so
 * every retry finds its grant however many asks of a hot budget are in flight
 * (a memory sized by count forgot them, and counted a retry twice). A lost
 * ask named later than this keeps its grant counted: under-admission, never over.
 */
const GRANT_MEMORY_MS = 2 * LEASE_MS;

export const windowStart = (nowSeconds: number, size: number) => Math.floor(nowSeconds / size) * size;

const secondsUntil = (moment: number, nowSeconds: number) => Math.max(1, Math.ceil(moment - nowSeconds));

/**
 * The state as of `t`: windows rolled over, grants too old to be retried
 * forgotten, an ended ban cleared with its streak. Revocations and learned
 * limits stay across the day boundary until their keep time.
 */
function current(previous: LimiterState | undefined, t: number): LimiterState {
  const minuteStart = windowStart(t, MINUTE_SECONDS);
  const dayStart = windowStart(t, DAY_SECONDS);
  const now = t * 1000;
  const sameDay = previous?.dayStart === dayStart;
  const limits = previous?.limits;
  const revokedKept =
    previous?.revoked && (previous.revokedKeepUntil === undefined ? sameDay : previous.revokedKeepUntil > now);
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
    ...(revokedKept && {
      revoked: previous.revoked,
      ...(previous.revokedKeepUntil !== undefined && { revokedKeepUntil: previous.revokedKeepUntil }),
    }),
    ...(previous?.rotated && { rotated: previous.rotated.filter((key) => key.endsAt + KEEP_FOR_KV_MS > now) }),
    ...(previous?.ending && { ending: previous.ending.filter((key) => key.endsAt + KEEP_FOR_KV_MS > now) }),
    ...(previous?.keysChangedAt !== undefined &&
      previous.keysChangedAt + KEEP_FOR_KV_MS > now && { keysChangedAt: previous.keysChangedAt }),
    ...(limits && (sameDay || limits.keepUntil > now) && { limits }),
  };
  if (state.bannedUntil > 0 && state.bannedUntil <= t) {
    state.streakFrom = state.bannedUntil;
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
 * The limits to decide by: the newest the object has been shown for this
 * budget, by any key's record or the operator API. Isolates send the limits
 * of the record they hold, and records can disagree for a while (a cached
 * one, a key of a rotated pair read before an update reached it); a stale
 * record never wins over a newer one (docs/operations.md#api-keys).
 */
function learnLimits(state: LimiterState, limits: Limits, setAt: number, now: number): Limits {
  if (!state.limits || setAt > state.limits.setAt) {
    state.limits = { perMinute: limits.perMinute, perDay: limits.perDay, setAt, keepUntil: now + KEEP_FOR_KV_MS };
  }
  return { perMinute: state.limits.perMinute, perDay: state.limits.perDay };
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
 * Decides one request and, when it is admitted, grants up to `want`
 * admissions (its own included), counted in both windows at once. A refused
 * request counts in neither and adds to the streak that leads to a ban
 * (unless the isolate counts it later, `deferRefusal`; the refusal that
 * crosses the threshold is always counted here, so a ban starts on time);
 * requests during a ban neither count nor extend it. A `speculative` request
 * (an isolate renewing its lease before it runs out) is no client's request:
 * refusing it adds nothing to the streak.
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
 * One lease request, as the object takes it: the asks whose answers were
 * lost give back their grants, the isolate's refusals are counted, a retried
 * ask gets its grant again without counting it twice, a revoked key is
 * refused without touching the budget, and the rest is decide().
 */
export function acquire(
  previous: LimiterState | undefined,
  request: LeaseRequest,
  now: number,
  tally: UsageChange[] = [],
): { state: LimiterState; verdict: LeaseAnswer } {
  const state = settle(previous, [], request.refusals, request.ban, now, request.abandoned, tally);
  const limits = learnLimits(state, request.limits, request.limitsSetAt ?? 0, now);
  const repeated = request.id === undefined ? undefined : state.grants!.find((grant) => grant.id === request.id);
  if (repeated && repeated.minuteStart === state.minuteStart && repeated.expiresAt > now) {
    // The first answer's grant, in the windows it was granted in (still the
    // current ones); nothing is counted again. Its expiry is read from now,
    // so the isolate spends it no longer than the object meant.
    const reports = windowReports(state, limits);
    const verdict: Verdict = { outcome: "admitted", now, ...reports, reported: quieterWindow(reports) };
    return { state, verdict: leaseAnswer(state, verdict, repeated.count, repeated.expiresAt) };
  }
  if (repeated) {
    // Its minute passed (or its lease ran out) before the isolate heard of it:
    // none of it was spent, so it goes back, and the ask is decided afresh in
    // the windows of now. Answering it in the new minute would have the
    // isolate hand its unspent part back to a window it was never counted in.
    state.grants = state.grants!.filter((grant) => grant !== repeated);
    takeBack(state, [repeated], tally);
  }
  if (request.keyId !== undefined && endedKeys(state, now).includes(request.keyId)) {
    return { state, verdict: { ...leaseAnswer(state, refusal(state, limits, now, false)), keyRevoked: true } };
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
 * Takes back what isolates did not spend (in the windows it was granted for,
 * if they are still current), and what asks whose answers were lost
 * (`abandoned`) were granted, and counts refusals isolates answered
 * themselves. Refusals answered before the streak last started over (a grant,
 * a ban's end, an unban) belong to an earlier streak and do not count; during
 * a ban refusals do not count at all.
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

/**
 * Uncounts admissions granted and never spent, in the windows they were
 * counted in when those are still current: nothing of one window is ever
 * taken from another. The history takes them back from their own minute and
 * day, past or not, so a settled minute counts what was spent in it.
 */
function takeBack(state: LimiterState, leases: readonly Unspent[], tally: UsageChange[]): void {
  for (const lease of leases) {
    if (lease.count > 0)
      tally.push({ minuteStart: lease.minuteStart, dayStart: lease.dayStart, admitted: -lease.count, refused: 0 });
    if (lease.minuteStart === state.minuteStart) state.minuteCount = Math.max(0, state.minuteCount - lease.count);
    if (lease.dayStart === state.dayStart) state.dayCount = Math.max(0, state.dayCount - lease.count);
  }
}

/**
 * Admissions granted to isolates that they may still spend or hand back, in
 * the windows they were counted in: the usage history's `reserved`
 * (docs/api.md#usage). A grant stops being reserved when its isolate hands
 * it back (GET /v2/usage has its own isolate do so first) or its lease ends;
 * what an isolate then hands back leaves the admitted count within moments.
 */
export function reservedGrants(state: LimiterState | undefined, now: number): Unspent[] {
  return (state?.grants ?? [])
    .filter((grant) => !grant.handedBack && grant.expiresAt > now && (grant.held ?? grant.count) > 0)
    .map(({ minuteStart, dayStart, count, held }) => ({ minuteStart, dayStart, count: held ?? count }));
}

/**
 * What the operator API reports of a budget: its counts in both windows (grants included), streak, ban, revocations.
 */
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
    revoked: endedKeys(state, now),
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

/**
 * Limits from the operator API, stamped `setAt` (the stamp `keys update`
 * wrote into the key records; now when none is given): in force from every
 * isolate's next call, and never replaced by a record with an older stamp.
 */
export function setLimits(
  previous: LimiterState | undefined,
  limits: Limits,
  setAt: number,
  now: number,
): LimiterState {
  const state = current(previous, now / 1000);
  learnLimits(state, limits, setAt, now);
  return state;
}

/** Marks one key of this budget revoked: refused from its next lease request on, kept until KV says so everywhere. */
export function revokeKey(previous: LimiterState | undefined, keyId: string, now: number): LimiterState {
  const state = current(previous, now / 1000);
  return {
    ...state,
    revoked: [...new Set([...(state.revoked ?? []), keyId])],
    revokedKeepUntil: now + KEEP_FOR_KV_MS,
    keysChangedAt: now,
  };
}

/**
 * Marks one key of this budget rotated away, ending at `endsAt` (Unix ms; now for a rotation without grace):
 * it acts only on itself from now on, and is refused from its end on, kept until KV says both everywhere.
 */
export function rotateKeyAway(
  previous: LimiterState | undefined,
  keyId: string,
  endsAt: number,
  now: number,
): LimiterState {
  const state = current(previous, now / 1000);
  return {
    ...state,
    rotated: [...(state.rotated ?? []).filter((key) => key.keyId !== keyId), { keyId, endsAt: Math.max(now, endsAt) }],
    keysChangedAt: now,
  };
}

/**
 * Gives one key of this budget an end (Unix ms: an update's `expiresAt`), kept until KV says it everywhere; a later
 * end replaces an earlier one.
 */
export function endKeyAt(previous: LimiterState | undefined, keyId: string, endsAt: number, now: number): LimiterState {
  const state = current(previous, now / 1000);
  return {
    ...state,
    ending: [...(state.ending ?? []).filter((key) => key.keyId !== keyId), { keyId, endsAt }],
    keysChangedAt: now,
  };
}

/** The keys this object refuses at `now`: revoked, rotated away and past their grace, or past an end given them. */
export function endedKeys(state: LimiterState, now: number): string[] {
  const ended = [...(state.rotated ?? []), ...(state.ending ?? [])]
    .filter((key) => key.endsAt <= now)
    .map((key) => key.keyId);
  return ended.length === 0 ? (state.revoked ?? []) : [...new Set([...(state.revoked ?? []), ...ended])];
}

/**
 * When the budget's keys last changed as far as KV's readers can tell (Unix ms; 0 when this object knows of no
 * change within KV's reach): the last revocation or rotation told, or a rotated key's grace ending since.
 */
export function lastKeyChange(previous: LimiterState | undefined, now: number): number {
  const state = current(previous, now / 1000);
  return Math.max(
    state.keysChangedAt ?? 0,
    ...[...(state.rotated ?? []), ...(state.ending ?? [])].map((key) => key.endsAt).filter((endsAt) => endsAt <= now),
  );
}

/** What the object knows of one key of its budget that KV may not show everywhere yet. */
export interface KeyStanding {
  /** Revoked, or rotated away and past its grace: refused. */
  ended: boolean;
  /** Rotated away (in its grace or past it): it acts only on itself. */
  rotatedAway: boolean;
  /** The end the object was told for it (a rotation's grace, an update's expiry), Unix ms; KV may not show it yet. */
  endsAt?: number;
}

export function keyStanding(previous: LimiterState | undefined, keyId: string, now: number): KeyStanding {
  const state = current(previous, now / 1000);
  const ends = [...(state.rotated ?? []), ...(state.ending ?? [])].filter((key) => key.keyId === keyId);
  return {
    ended: endedKeys(state, now).includes(keyId),
    rotatedAway: (state.rotated ?? []).some((key) => key.keyId === keyId),
    ...(ends.length > 0 && { endsAt: Math.min(...ends.map((key) => key.endsAt)) }),
  };
}

function leaseAnswer(state: LimiterState, verdict: Verdict, granted = 0, expiresAt = verdict.now): LeaseAnswer {
  return {
    ...verdict,
    granted,
    expiresAt,
    refusedInARow: state.refusedInARow,
    banEnds: state.bannedUntil,
    revoked: endedKeys(state, verdict.now),
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

/**
 * When this state stops mattering, in Unix seconds: the day window is over,
 * any ban has ended, and revocations and learned limits are past their keep time.
 */
export function expiresAt(state: LimiterState): number {
  const rotatedUntil = Math.max(
    0,
    ...[...(state.rotated ?? []), ...(state.ending ?? [])].map((key) => key.endsAt + KEEP_FOR_KV_MS),
  );
  const keptUntil = Math.max(state.revokedKeepUntil ?? 0, rotatedUntil, state.limits?.keepUntil ?? 0) / 1000;
  return Math.ceil(Math.max(state.dayStart + DAY_SECONDS, state.bannedUntil, keptUntil));
}
