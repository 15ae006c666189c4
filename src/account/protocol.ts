/**
 * The messages between an isolate and an account's object. In a gradual deployment old isolates meet new objects and
 * the reverse, so these shapes only grow; test/node/logic/limiter-protocol.test.ts pins them.
 */
import type { ApiKeyRecord, KeyStanding } from "./key-record";
import type { Limits } from "./plans";

export interface BanRule {
  /** A ban starts once more than this many requests in a row were refused. */
  threshold: number;
  seconds: number;
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
  /** The window the headers describe (docs/api.md#rate-limits). */
  reported: WindowName;
  /** For refusals: whole seconds until a retry can succeed. */
  retryAfter?: number;
  /** For bans: Unix seconds at which the ban ends (the first whole second after it). */
  bannedUntil?: number;
}

/** Admissions an isolate did not spend, handed back once its lease expired. */
export interface Unspent {
  minuteStart: number;
  dayStart: number;
  count: number;
  /** The ask whose grant this was, so the object stops counting it as reserved; sent with a count of 0 too. */
  grantId?: string;
}

/** Refusals an isolate answered (or was told to answer) itself, counted in the object later. */
export interface RefusalBatch {
  count: number;
  /** Unix milliseconds of the first of them. */
  since: number;
  /** Unique per batch: a batch sent again (a retried call) is counted once. */
  id: string;
  /** Every 429 the isolate decided since its last batch, by minute: [Unix seconds of the minute's start, count]. */
  answered?: [number, number][];
}

/** An isolate asking for admissions: for a request waiting on it, or ahead of need (`speculative`). */
export interface LeaseRequest {
  /** Unique per ask; a retry of the same ask carries the same id and gets the same grant, counted once. */
  id: string;
  /** The key presented: the account answers its standing and record, and counts nothing for a key it refuses. */
  keyId?: string;
  /** The limits of a caller without an account (an address, an operator, a partner); an account has its own. */
  limits?: Limits;
  ban: BanRule;
  /** Admissions wanted, the asking request's own included. */
  want: number;
  /** A renewal ahead of need: no client request is refused if there is no room. */
  speculative: boolean;
  /** Refusals the isolate answered itself, counted before this request is decided. */
  refusals?: RefusalBatch;
  /** Ids of earlier asks whose answers never arrived (the client got 503): what they were granted goes back. */
  abandoned?: string[];
  /** The isolate counts this refusal once the client has it, so a lost answer never counts toward a ban. */
  deferRefusal?: boolean;
}

/** The object's answer: the asking request's verdict, and what the isolate may spend after it. */
export interface LeaseAnswer extends Verdict {
  /** Admissions granted, the asking request's own included (0 when refused). */
  granted: number;
  /** Object's clock, Unix ms; read as a duration from when the ask was sent, so clock skew cannot stretch a lease. */
  expiresAt: number;
  /** The object's refusals in a row after this answer. */
  refusedInARow: number;
  /** Exact end of a ban, Unix seconds (0 when none). */
  banEnds: number;
  /** Set when the request's refusal was not counted: the isolate counts it once the client has it. */
  refusalDeferred?: boolean;
  /** For an ask with a key: the key as the account decides it now (when not live, nothing was counted). */
  key?: KeyAnswer;
}

/** The account's word on the key presented: its standing, and its record unless revoked or unknown. */
export interface KeyAnswer {
  standing: KeyStanding;
  record?: ApiKeyRecord;
}

/** An isolate handing back what it did not spend, and sending refusals it answered itself. */
export interface SettleRequest {
  ban: BanRule;
  unspent: Unspent[];
  refusals?: RefusalBatch;
  abandoned?: string[];
}

export interface SettleAnswer {
  refusedInARow: number;
  banEnds: number;
}
