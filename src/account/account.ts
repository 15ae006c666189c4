import { DurableObject } from "cloudflare:workers";
import type { Limits } from "./plans";
import {
  acquire,
  expiresAt,
  forgive,
  keyStanding,
  lastKeyChange,
  reservedGrants,
  revokeKey,
  rotateKeyAway,
  endKeyAt,
  setLimits,
  settle,
  unban,
  usageOf,
  type KeyStanding,
  type LimiterState,
  type Usage,
} from "./policy";
import type { LeaseAnswer, LeaseRequest, SettleAnswer, SettleRequest } from "./protocol";
import { admitTestEvent } from "./webhook-test-event-quota";
import { banNoticeChange, noticesBansOf, writeBanNotice } from "./ban-entries";
import { UsageLedger, withReserved, type HistoryRange, type UsageChange, type UsageRow } from "./usage-ledger";
import { IdempotentAnswers, type BeginAnswer, type KeptAnswer } from "./idempotent-answers";

const STATE = "state";
/** The times of the budget's test events within the last minute. */
const TEST_EVENTS = "testEvents";

/**
 * One object per budget (an API key and the keys rotated from it, or an
 * address group, for callers without one): the counter of record. It grants
 * leases of admissions that worker isolates spend on their own (docs/design/rate-limits.md#leases). Each method reads,
 * decides and writes with no await in between,
 * so concurrent calls are decided one after another and never over-grant.
 * State lives in the object's SQLite storage, written before the answer
 * leaves, so a grant survives eviction and restarts; a copy in memory saves
 * the read on every call but the first of each instance. The usage history
 * is written in the same call as the decisions it counts (one transaction:
 * nothing awaits in between).
 */
export class Account extends DurableObject<Env> {
  #state: LimiterState | undefined;
  readonly #ledger: UsageLedger;
  readonly #answers: IdempotentAnswers;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#ledger = new UsageLedger(ctx.storage.sql);
    this.#answers = new IdempotentAnswers(ctx.storage.sql);
  }

  acquire(request: LeaseRequest): LeaseAnswer {
    const previous = this.#load();
    const tally: UsageChange[] = [];
    const { state, verdict } = acquire(previous, request, Date.now(), tally);
    this.#save(previous, state, tally);
    return verdict;
  }

  settle(request: SettleRequest): SettleAnswer {
    const previous = this.#load();
    const tally: UsageChange[] = [];
    const state = settle(
      previous,
      request.unspent,
      request.refusals,
      request.ban,
      Date.now(),
      request.abandoned,
      tally,
    );
    this.#save(previous, state, tally);
    return { refusedInARow: state.refusedInARow, banEnds: state.bannedUntil };
  }

  /**
   * The budget's history: the non-empty buckets of the range, what isolates still hold of their grants apart
   * (docs/api.md#usage).
   */
  usageHistory(query: HistoryRange): UsageRow[] {
    const reserved = reservedGrants(this.#load(), Date.now()).map(({ minuteStart, dayStart, count }) => ({
      minuteStart,
      dayStart,
      admitted: count,
      refused: 0,
    }));
    return withReserved(this.#ledger.read(query), reserved, query);
  }

  /** The operator API's view of this budget. */
  usage(): Usage {
    return usageOf(this.#load(), Date.now());
  }

  /** The operator API's unban: the ban ends now, and isolates learn it at their next call (within a lease's length). */
  unban(): Usage {
    return this.#change((previous, now) => unban(previous, now));
  }

  /** The operator API's lifting of a partner's refusal: its windows start over and any ban ends. */
  forgive(): Usage {
    return this.#change((previous, now) => forgive(previous, now));
  }

  /**
   * The operator API's limits: the budget's from every isolate's next call on
   * (within a lease's length). `setAt` is the stamp the key records carry, so
   * a record read before the update can never bring the old limits back.
   */
  updateLimits(limits: Limits, setAt?: number): Usage {
    return this.#change((previous, now) => setLimits(previous, limits, setAt ?? now, now));
  }

  /** The operator API's revocation: isolates refuse the key from their next call on (within a lease's length). */
  revoke(keyId: string): Usage {
    return this.#change((previous, now) => revokeKey(previous, keyId, now));
  }

  /**
   * A key of this budget rotated away (the owner's rotation, the keys command's): it acts only on itself from
   * now on, and isolates refuse it from `endsAt` (Unix ms) on, at their next call (within a lease's length).
   */
  rotate(keyId: string, endsAt: number): Usage {
    return this.#change((previous, now) => rotateKeyAway(previous, keyId, endsAt, now));
  }

  /** An update's end for a key of this budget: isolates refuse it from `endsAt` (Unix ms) on, at their next call. */
  endKey(keyId: string, endsAt: number): Usage {
    return this.#change((previous, now) => endKeyAt(previous, keyId, endsAt, now));
  }

  /**
   * Whether a key is ended or rotated away as this object knows now: who may act is decided here, never by a KV read
   * that may lag.
   */
  standing(keyId: string): KeyStanding {
    return keyStanding(this.#load(), keyId, Date.now());
  }

  /**
   * When the budget's keys last changed (Unix ms; 0: not within KV's reach): a lane calls a budget dead only well after
   * it (live-budget.ts).
   */
  keysChangedAt(): number {
    return lastKeyChange(this.#load(), Date.now());
  }

  /**
   * Counts a test event of the budget's: null when it may be sent, else the milliseconds until one may
   * (webhook-test-event-quota.ts).
   */
  admitTestEvent(now: number): number | null {
    const { times, retryAfterMs } = admitTestEvent(this.ctx.storage.kv.get<number[]>(TEST_EVENTS) ?? [], now);
    this.ctx.storage.kv.put(TEST_EVENTS, times);
    return retryAfterMs;
  }

  /**
   * A write with an Idempotency-Key (docs/api.md#retrying-safely): whether it runs, gets its first answer again, or
   * is refused; one that runs holds the key until finishIdempotent or abandonIdempotent (idempotent-answers.ts).
   */
  beginIdempotent(keyId: string, idempotencyKey: string, request: string): BeginAnswer {
    // A key this object knows ended (revoked, or past its grace) is given nothing kept, even while KV still shows it
    // live somewhere: its request goes on to be refused (docs/design/rate-limits.md#key-state). A key rotated away
    // still gets the answers it was given before: its own rotation's, most of all.
    if (keyStanding(this.#load(), keyId, Date.now()).ended) return { kind: "bypass" };
    const answer = this.#answers.begin(keyId, idempotencyKey, request, Date.now());
    if (answer.kind === "run") this.#wakeForPrune();
    return answer;
  }

  finishIdempotent(
    keyId: string,
    idempotencyKey: string,
    request: string,
    startedAt: number,
    answer: KeptAnswer,
  ): void {
    this.#answers.finish(keyId, idempotencyKey, request, startedAt, answer);
  }

  abandonIdempotent(keyId: string, idempotencyKey: string, request: string, startedAt: number): void {
    this.#answers.abandon(keyId, idempotencyKey, request, startedAt);
  }

  /** An alarm by the time the oldest kept answer is due to go, unless one comes sooner. */
  #wakeForPrune(): void {
    const due = this.#answers.prune(Date.now());
    if (due === undefined) return;
    void this.ctx.storage.getAlarm().then((alarm) => {
      if (alarm === null || alarm > due) return this.ctx.storage.setAlarm(due);
    });
  }

  #change(change: (previous: LimiterState | undefined, now: number) => LimiterState): Usage {
    const previous = this.#load();
    this.#save(previous, change(previous, Date.now()));
    return this.usage();
  }

  #load(): LimiterState | undefined {
    // This instance is the only writer, so what it last wrote is what storage holds.
    return this.#state ?? this.ctx.storage.kv.get<LimiterState>(STATE);
  }

  #save(previous: LimiterState | undefined, state: LimiterState, tally: readonly UsageChange[] = []): void {
    this.ctx.storage.kv.put(STATE, state);
    this.#ledger.record(tally);
    this.#state = state;
    if (!previous || expiresAt(previous) !== expiresAt(state)) {
      void this.ctx.storage.setAlarm(expiresAt(state) * 1000);
    }
    this.#noticeBan(previous?.bannedUntil ?? 0, state.bannedUntil);
  }

  /** A ban started or lifted: its notice for the operators' search, written after the answer, never failing it. */
  #noticeBan(before: number, after: number): void {
    const now = Date.now() / 1000;
    const change = banNoticeChange(before, after, now);
    const budget = this.ctx.id.name;
    if (!change || budget === undefined || !noticesBansOf(budget)) return;
    this.ctx.waitUntil(
      writeBanNotice(this.env.API_KEYS, budget, change, now).catch((error: unknown) =>
        console.error(
          JSON.stringify({
            level: "error",
            message: "a ban's notice for the operators' search was not written",
            budget,
            error: String(error),
          }),
        ),
      ),
    );
  }

  /**
   * Forgets the budget's state once nothing stored can affect a decision any
   * more (revocations and learned limits included), and its history as it
   * passes its keeping time; the object is emptied when neither is left.
   */
  async alarm(): Promise<void> {
    const now = Date.now();
    const nextPrune = this.#ledger.prune(now / 1000);
    const nextAnswerDue = this.#answers.prune(now);
    const state = this.ctx.storage.kv.get<LimiterState>(STATE);
    const stateLive = state !== undefined && expiresAt(state) * 1000 > now;
    if (!stateLive) {
      this.#state = undefined;
      this.ctx.storage.kv.delete(STATE);
    }
    const next = Math.min(
      stateLive ? expiresAt(state) : Infinity,
      nextPrune ?? Infinity,
      nextAnswerDue === undefined ? Infinity : nextAnswerDue / 1000,
    );
    if (next !== Infinity) await this.ctx.storage.setAlarm(next * 1000);
    else {
      await this.ctx.storage.deleteAll();
      // This instance may serve the budget's next request: its ledger's tables must be there (deleteAll dropped them).
      this.#ledger.createTables();
      this.#answers.createTables();
    }
  }
}
