/**
 * What one isolate knows of one caller's limits, and the rules it decides by without calling the caller's object: pure
 * functions of an explicit clock (docs/design/rate-limits.md#leases). It admits only what the object granted, so no
 * number of isolates can exceed a limit.
 */
import type { Limits } from "./plans";
import { LEASE_MS, MINUTE_SECONDS, quieterWindow, windowStart } from "./policy";
import type {
  BanRule,
  KeyAnswer,
  LeaseAnswer,
  LeaseRequest,
  RefusalBatch,
  SettleRequest,
  Unspent,
  Verdict,
} from "./protocol";

/** The fewest refusals answered here that are sent to the object together, whatever the ban rule. */
const MIN_REFUSAL_BATCH = 10;

/**
 * Refusals answered here go to the object once this many have gathered (half the ban threshold, at least 10), which
 * bounds how late a ban starts when several isolates serve one caller; far below a ban they go by time instead
 * (REFUSAL_FLUSH_MS).
 */
export const refusalBatch = (ban: BanRule): number => Math.max(MIN_REFUSAL_BATCH, Math.floor(ban.threshold / 2));
/** A lease that ends within this long is renewed ahead, so a steady caller never waits for the object. */
const RENEW_AHEAD_MS = 1_000;
/** The current period says something about the rate once it is this long. */
const MIN_SAMPLE_MS = 250;
/** Lost asks kept to name to the object; older ones are dropped (their grants stay counted: safe). */
const ABANDONED_KEPT = 32;

/** The account's word on a key, as this isolate holds it: good until `until`, on this isolate's clock. */
export interface KnownKey extends KeyAnswer {
  until: number;
}

/** A decision as the isolate hands it on: for a key, with the account's word on it. */
export type Admission = Verdict & { key?: KnownKey };

interface Lease extends Unspent {
  grantId: string;
  /** On this isolate's clock. */
  expiresAt: number;
}

export interface LeaseBook {
  /** Unexpired grants, oldest first; `count` is what is left of each. */
  leases: Lease[];
  /** The object's last answer: its windows as it counted them then, grants included. */
  last: LeaseAnswer | undefined;
  /** Until then (Unix ms) the object has no room: refusals are answered here. */
  refusedUntil: number;
  /** Exact end of a known ban, Unix seconds; 0 when none. */
  banEnds: number;
  /** Until then (Unix ms) a known ban is answered here; then the object is asked again, so an unban arrives. */
  banKnownUntil: number;
  /** The account's word on each key asked with, good until `until`; a refused key keeps its refusal. */
  keys: Map<string, { known: KnownKey; refusal?: Admission }>;
  /** The object's refusals in a row at its last answer. */
  streak: number;
  /** Refusals answered here, not yet sent to the object. */
  pending: Omit<RefusalBatch, "id">;
  /** Refusals sent, whose answer is not back yet. */
  sending: number;
  /** Requests seen in the current lease-length period and in the one before. */
  demand: { periodStart: number; current: number; previous: number };
  /** Ids of asks whose answers never arrived, to name in the next call so the object takes their grants back. */
  abandoned: string[];
}

export function newLeaseBook(): LeaseBook {
  return {
    leases: [],
    last: undefined,
    refusedUntil: 0,
    banEnds: 0,
    banKnownUntil: 0,
    keys: new Map(),
    streak: 0,
    pending: { count: 0, since: 0 },
    sending: 0,
    demand: { periodStart: 0, current: 0, previous: 0 },
    abandoned: [],
  };
}

export function noteArrival(book: LeaseBook, now: number): void {
  const demand = book.demand;
  if (now - demand.periodStart >= LEASE_MS) {
    demand.previous = now - demand.periodStart < 2 * LEASE_MS ? demand.current : 0;
    demand.current = 0;
    demand.periodStart = now;
  }
  demand.current += 1;
}

/** Requests expected within a lease: the last period's, or the current rate once 250 ms can tell. */
function expectedDemand(book: LeaseBook, now: number): number {
  const { periodStart, current, previous } = book.demand;
  const elapsed = now - periodStart;
  return Math.max(previous, elapsed >= MIN_SAMPLE_MS ? Math.ceil((current * LEASE_MS) / elapsed) : 0);
}

/** How many admissions to ask for: one per request waiting, or what the isolate expects to spend within a lease. */
export function leaseWant(book: LeaseBook, waiting: number, now: number): number {
  return Math.max(waiting + 1, expectedDemand(book, now));
}

/** Takes expired leases out, returning what they left unspent; the room made lifts a known refusal. */
export function takeExpired(book: LeaseBook, now: number): Unspent[] {
  const expired = book.leases.filter((lease) => lease.expiresAt <= now);
  if (expired.length === 0) return [];
  book.leases = book.leases.filter((lease) => lease.expiresAt > now);
  // A spent lease is named too, so the object stops counting it as reserved.
  const unspent = expired.map(({ minuteStart, dayStart, count, grantId }) => ({
    minuteStart,
    dayStart,
    count,
    grantId,
  }));
  if (unspent.some((lease) => lease.count > 0)) book.refusedUntil = 0;
  return unspent;
}

/** Ends every lease now, so the next settle hands back what is left (the usage history, read where it was spent). */
export function expireLeases(book: LeaseBook, now: number): void {
  for (const lease of book.leases) lease.expiresAt = Math.min(lease.expiresAt, now);
}

export function unspent(book: LeaseBook, now: number): number {
  return book.leases.reduce((sum, lease) => sum + (lease.expiresAt > now ? lease.count : 0), 0);
}

/**
 * The refusal the book answers without the object: a known ban, or a full window with no lease left. None for the
 * refusal that would pass the ban threshold, so a ban starts on time. Records nothing (noteLocalRefusal does).
 */
export function localRefusal(book: LeaseBook, ban: BanRule, now: number): Verdict | undefined {
  const t = now / 1000;
  const last = book.last;
  if (!last) return undefined;
  if (book.banEnds > t && now < book.banKnownUntil) {
    return {
      ...last,
      outcome: "banned",
      now,
      retryAfter: Math.max(1, Math.ceil(book.banEnds - t)),
      bannedUntil: Math.ceil(book.banEnds),
    };
  }
  if (book.leases.some((lease) => lease.expiresAt > now && lease.count > 0)) return undefined;
  if (
    book.refusedUntil > now &&
    last.outcome === "limited" &&
    book.streak + book.sending + book.pending.count + 1 <= ban.threshold
  ) {
    const reset = last[last.reported].reset;
    return { ...last, now, retryAfter: Math.max(1, Math.ceil(reset - t)) };
  }
  return undefined;
}

/** Counts a refusal localRefusal() gave: toward the streak and into the usage history. */
export function noteLocalRefusal(book: LeaseBook, refusal: Verdict, now: number): void {
  if (refusal.outcome === "limited") noteRefusal(book, now);
  noteAnswered(book, now);
}

/**
 * Decides a request here when the book can: for a key, only while the account's word on it is fresh; then a known ban,
 * an unexpired lease, or a refusal while the object has no room. Undefined when only the object can decide.
 */
export function decideLocally(book: LeaseBook, ban: BanRule, now: number, keyId?: string): Admission | undefined {
  const entry = keyId === undefined ? undefined : book.keys.get(keyId);
  if (keyId !== undefined && (!entry || entry.known.until <= now)) return undefined;
  if (entry?.refusal) return entry.refusal;
  const key = entry && { key: entry.known };
  const refusal = localRefusal(book, ban, now);
  if (refusal) {
    noteLocalRefusal(book, refusal, now);
    return { ...refusal, ...key };
  }
  const lease = book.leases.find((candidate) => candidate.expiresAt > now && candidate.count > 0);
  if (!lease || !book.last) return undefined;
  lease.count -= 1;
  return { ...admittedWithUnspent(book.last, unspent(book, now), now), ...key };
}

/** What this isolate holds counts as remaining; others may have spent the rest: "at most this many". */
function admittedWithUnspent(last: LeaseAnswer, held: number, now: number): Verdict {
  const minute = { ...last.minute, remaining: last.minute.remaining + held };
  const day = { ...last.day, remaining: last.day.remaining + held };
  return { outcome: "admitted", now, minute, day, reported: quieterWindow({ minute, day }) };
}

/** What the isolate knows of the caller when it asks: the key presented, or the limits of a caller without one. */
export interface Asker {
  limits?: Limits;
  ban: BanRule;
  keyId?: string;
}

/** A lease request: it carries the refusals answered here, so a ban starts on time, and the lost asks. */
export function leaseRequest(
  book: LeaseBook,
  asker: Asker,
  waiting: number,
  now: number,
  speculative: boolean,
  id: string,
): LeaseRequest {
  const refusals = speculative ? undefined : takeRefusals(book, `${id}/refusals`);
  return {
    id,
    ...(asker.keyId !== undefined && { keyId: asker.keyId }),
    ...(asker.limits && { limits: asker.limits }),
    ban: asker.ban,
    want: leaseWant(book, waiting, now),
    speculative,
    ...(refusals && { refusals }),
    ...(book.abandoned.length > 0 && { abandoned: [...book.abandoned] }),
    deferRefusal: true,
  };
}

/**
 * Records the object's answer to `request`, sent at `sentAt`. Its times are read as durations from `sentAt`, so a lease
 * never outlives what the object meant, whatever the clocks say. The asker's first granted admission is its own;
 * returns its verdict, or undefined for a renewal.
 */
export function absorbAnswer(
  book: LeaseBook,
  answer: LeaseAnswer,
  now: number,
  asker: boolean,
  request: Pick<LeaseRequest, "refusals" | "abandoned" | "id" | "keyId">,
  sentAt = now,
): Admission | undefined {
  acknowledged(book, request, now);
  const key = answer.key && request.keyId !== undefined ? rememberKey(book, request.keyId, answer, sentAt) : undefined;
  if (key?.refusal) return asker ? key.refusal : undefined;
  const withKey = key && { key: key.known };
  book.last = answer;
  book.streak = answer.refusedInARow;
  book.banEnds = answer.banEnds;
  const fromObject = (moment: number) => sentAt + (moment - answer.now);
  if (answer.outcome === "admitted") {
    book.refusedUntil = 0;
    const count = answer.granted - (asker ? 1 : 0);
    if (count > 0) {
      book.leases.push({
        minuteStart: answer.minute.reset - answer.minute.size,
        dayStart: answer.day.reset - answer.day.size,
        count,
        expiresAt: fromObject(answer.expiresAt),
        grantId: request.id,
      });
    }
    return asker ? { ...admittedWithUnspent(answer, unspent(book, now), answer.now), ...withKey } : undefined;
  }
  if (answer.outcome === "limited") {
    // Ask again within a lease at the latest: capacity handed back elsewhere, or a raised limit, arrives that soon.
    book.refusedUntil = Math.min(now + LEASE_MS, fromObject(answer[answer.reported].reset * 1000));
    if (asker && answer.refusalDeferred) noteRefusal(book, now);
  }
  if (!asker) return undefined;
  const { key: _, ...verdict } = answer;
  return { ...verdict, ...withKey };
}

/** An ask whose answer never arrived (the client got 503): the object is told of it with the next call. */
export function abandonAsk(book: LeaseBook, request: Pick<LeaseRequest, "id" | "refusals">): void {
  book.sending = Math.max(0, book.sending - (request.refusals?.count ?? 0));
  if (request.id !== undefined) book.abandoned = [...book.abandoned, request.id].slice(-ABANDONED_KEPT);
}

/** The object has the call: the refusals it carried are counted, the lost asks it named are settled. */
function acknowledged(book: LeaseBook, request: Pick<LeaseRequest, "refusals" | "abandoned">, now: number): void {
  book.sending = Math.max(0, book.sending - (request.refusals?.count ?? 0));
  if (request.abandoned) book.abandoned = book.abandoned.filter((id) => !request.abandoned!.includes(id));
  book.banKnownUntil = now + LEASE_MS;
}

function noteRefusal(book: LeaseBook, now: number): void {
  if (book.pending.count === 0) book.pending.since = now;
  book.pending.count += 1;
}

/** A 429 decided here, for the account's usage history (the object counts the ones it decides). */
function noteAnswered(book: LeaseBook, now: number): void {
  const minuteStart = windowStart(now / 1000, MINUTE_SECONDS);
  book.pending.answered ??= [];
  const answered = book.pending.answered;
  const latest = answered.at(-1);
  if (latest && latest[0] === minuteStart) latest[1] += 1;
  else answered.push([minuteStart, 1]);
}

/** Moves the refusals answered here into a batch (named `id`) to send; undefined when there are none. */
export function takeRefusals(book: LeaseBook, id: string): RefusalBatch | undefined {
  if (book.pending.count === 0 && !book.pending.answered?.length) return undefined;
  const batch = { ...book.pending, id };
  book.sending += batch.count;
  book.pending = { count: 0, since: 0 };
  return batch;
}

/** What to send the object in the background (unspent leases, refusals, lost asks); undefined for nothing. */
export function settleRequest(book: LeaseBook, ban: BanRule, now: number, id: string): SettleRequest | undefined {
  const unspent = takeExpired(book, now);
  const refusals = takeRefusals(book, id);
  if (unspent.length === 0 && !refusals && book.abandoned.length === 0) return undefined;
  return {
    ban,
    unspent,
    ...(refusals && { refusals }),
    ...(book.abandoned.length > 0 && { abandoned: [...book.abandoned] }),
  };
}

/** Records the object's answer to a settle request. */
export function absorbSettled(
  book: LeaseBook,
  answer: { refusedInARow: number; banEnds: number },
  request: SettleRequest,
  now: number,
): void {
  acknowledged(book, request, now);
  book.streak = answer.refusedInARow;
  book.banEnds = answer.banEnds;
}

/** A failed settle: its refusals are lost (which can only delay a ban); the lost asks are named again. */
export function settleFailed(book: LeaseBook, request: SettleRequest): void {
  book.sending = Math.max(0, book.sending - (request.refusals?.count ?? 0));
}

/**
 * Whether a steady caller's lease is renewed in the background: one expected to send several within a lease, at a
 * quarter of it left or within a second of its end. Never for a short burst (it would leave capacity unspent), nor
 * while refused or banned.
 */
export function needsRenewal(book: LeaseBook, now: number): boolean {
  const expected = expectedDemand(book, now);
  if (book.leases.length === 0 || expected < 2) return false;
  if (book.refusedUntil > now || book.banEnds > now / 1000) return false;
  const lowWater = Math.max(1, Math.floor(expected / 4));
  const newest = book.leases[book.leases.length - 1]!;
  return unspent(book, now) <= lowWater || newest.expiresAt - now <= RENEW_AHEAD_MS;
}

/** The account's word on a key: a live or unknown key's for a lease at most, a stopped key's for good. */
function rememberKey(
  book: LeaseBook,
  keyId: string,
  answer: LeaseAnswer,
  sentAt: number,
): { known: KnownKey; refusal?: Admission } {
  const { standing, record } = answer.key!;
  const ends = record?.expiresAt === undefined ? Infinity : Date.parse(record.expiresAt);
  const until = standing === "revoked" || standing === "expired" ? Infinity : Math.min(sentAt + LEASE_MS, ends);
  const known: KnownKey = { ...answer.key!, until };
  const entry = { known, ...(standing !== "live" && { refusal: { ...answer, key: known } }) };
  book.keys.set(keyId, entry);
  return entry;
}
