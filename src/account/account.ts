import { DurableObject } from "cloudflare:workers";
import { ANONYMOUS_LIMITS, type Limits } from "./plans";
import {
  acquire,
  expiresAt,
  forgive,
  reservedGrants,
  settle,
  unban,
  usageOf,
  type LimiterState,
  type Usage,
} from "./policy";
import type { LeaseAnswer, LeaseRequest, SettleAnswer, SettleRequest } from "./protocol";
import { admitTestEvent } from "./webhook-test-event-quota";
import { banNoticeChange, noticesBansOf, writeBanNotice } from "./ban-entries";
import { UsageLedger, withReserved, type HistoryRange, type UsageChange, type UsageRow } from "./usage-ledger";
import { IdempotentAnswers, type BeginAnswer, type KeptAnswer } from "./idempotent-answers";
import { AccountKeys, type PlanChange } from "./account-keys";
import { SearchEntries, writeSearchEntries, type SearchChange } from "./key-search-entries";
import { limitsFor, revoked, standingOf, type ApiKeyRecord, type RevocationReason } from "./key-record";
import {
  revocationRefusal,
  rotationOf,
  updateRefusal,
  WEBHOOK_READER_SCOPE,
  type KeyRefusal,
  type KeyUpdate,
  type NewKey,
  type Rotation,
  type Updated,
} from "./key-rules";

const STATE = "state";
/** How soon the alarm writes the search entries a failed write left owed. */
const SEARCH_RETRY_MS = 30_000;
/** The times of the account's test events within the last minute. */
const TEST_EVENTS = "testEvents";

/**
 * One object per account, and one per caller counted without one (an address group, an operator, a partner): the one
 * owner of everything it knows. Its keys and plan decide who may act, its windows, leases and bans how much; it also
 * keeps its writes' answers, its test-event quota and its usage history. No method awaits between reading and writing,
 * so calls are decided one after another and no stale copy ever decides.
 */
export class Account extends DurableObject<Env> {
  #state: LimiterState | undefined;
  readonly #ledger: UsageLedger;
  readonly #answers: IdempotentAnswers;
  readonly #keys: AccountKeys;
  readonly #search: SearchEntries;

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    this.#ledger = new UsageLedger(ctx.storage.sql);
    this.#answers = new IdempotentAnswers(ctx.storage.sql);
    this.#keys = new AccountKeys(ctx.storage.sql);
    const write = async (change: SearchChange) => {
      // Without its name (an alarm set by an older runtime) it cannot say whose plan: owed until a call names it.
      if (ctx.id.name === undefined) throw new Error("the account's object does not know its name");
      await writeSearchEntries(env.API_KEYS, ctx.id.name, change);
    };
    this.#search = new SearchEntries(ctx.storage.kv, write, {
      key: (keyId) => this.#keys.get(keyId),
      plan: () => this.#keys.plan(),
    });
    // Owed by a run that ended before it wrote them.
    if (this.#search.owes) void this.#writeSearch();
  }

  /** The one step for a request: the key's standing first (a refused key counts nothing), then the limits. */
  acquire(request: LeaseRequest): LeaseAnswer {
    const now = Date.now();
    const previous = this.#load();
    const tally: UsageChange[] = [];
    const key = request.keyId === undefined ? undefined : this.#keys.get(request.keyId);
    const standing = request.keyId === undefined ? undefined : standingOf(key, now);
    const { state, verdict } = acquire(previous, request, now, tally, {
      limits: this.#limits(request.limits),
      keyRefused: standing !== undefined && standing !== "live",
    });
    this.#save(previous, state, tally);
    if (standing === undefined) return verdict;
    // A revoked key's record says nothing its holder needs; an expired key's says when it ended.
    return { ...verdict, key: { standing, ...(key && standing !== "revoked" && { record: key }) } };
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

  /** The history's non-empty buckets in the range, with what isolates still hold apart (docs/api.md#usage). */
  usageHistory(query: HistoryRange): UsageRow[] {
    const reserved = reservedGrants(this.#load(), Date.now()).map(({ minuteStart, dayStart, count }) => ({
      minuteStart,
      dayStart,
      admitted: count,
      refused: 0,
    }));
    return withReserved(this.#ledger.read(query), reserved, query);
  }

  /** The operator API's view of this account. */
  usage(): Usage {
    const now = Date.now();
    const refused = this.#keys
      .all()
      .filter((key) => standingOf(key, now) !== "live")
      .map((key) => key.id);
    return usageOf(this.#load(), now, refused);
  }

  /** The operator API's unban: the ban ends now, and isolates learn it at their next call (within a lease's length). */
  unban(): Usage {
    return this.#change((previous, now) => unban(previous, now));
  }

  /** The operator API's lifting of a partner's refusal: its windows start over and any ban ends. */
  forgive(): Usage {
    return this.#change((previous, now) => forgive(previous, now));
  }

  /** A new key of this account; the account's first key sets its plan. False when its id is taken. */
  async addKey(record: ApiKeyRecord): Promise<boolean> {
    const added = this.#keys.add(record);
    if (added) await this.#changed({ keyIds: [record.id] });
    return added;
  }

  /** A key of this account as it stands now; null for none. */
  key(keyId: string): ApiKeyRecord | null {
    return this.#keys.get(keyId) ?? null;
  }

  /** The account's keys after `after` (a key id) in id order, at most `limit`, and whether more follow. */
  keys(after: string, limit: number): { keys: ApiKeyRecord[]; more: boolean } {
    return this.#keys.page(after, limit);
  }

  /**
   * Revokes a key for good at `at` (null: none such); isolates refuse it within a lease. Refused when a key of the
   * account asks (`askedBy`) that may act only on itself (key-rules.ts), as the account holds it now.
   */
  async revokeKey(
    keyId: string,
    reason: RevocationReason,
    at: string,
    askedBy?: string,
  ): Promise<{ before: ApiKeyRecord; after: ApiKeyRecord } | KeyRefusal | null> {
    const before = this.#keys.get(keyId);
    if (!before) return null;
    const asker = askedBy === undefined ? undefined : this.#keys.get(askedBy);
    const refusal = revocationRefusal(asker, askedBy, keyId, Date.now());
    if (refusal) return refusal;
    const after = revoked(before, reason, at);
    this.#keys.put(after);
    // The search shows when a key was revoked, never why: a retired key found leaked changes nothing there.
    if (before.revokedAt === undefined) await this.#changed({ keyIds: [keyId] });
    return { before, after };
  }

  /** A leaked key's ending done: asking to revoke it as leaked again no longer ends it again. */
  endLeak(keyId: string, at: string): ApiKeyRecord | null {
    const key = this.#keys.get(keyId);
    if (!key) return null;
    const ended = { ...key, leakEndedAt: key.leakEndedAt ?? at };
    this.#keys.put(ended);
    return ended;
  }

  /**
   * Replaces a live key by a new one with its name, scopes and expiry; the old one acts only on itself until its grace
   * ends. Refused for a key not live or rotated already, or an asking key that may not make keys.
   */
  async rotateKey(keyId: string, made: NewKey, graceEndsAt: string, askedBy?: string): Promise<Rotation> {
    const key = this.#keys.get(keyId);
    // The same rotation asked again (its first answer was lost): it happened, and its answer is the same.
    if (key?.rotatedTo === made.id) return { kind: "rotated", previous: key, rotated: this.#keys.get(made.id)! };
    const asker = askedBy === undefined ? undefined : this.#keys.get(askedBy);
    const now = Date.now();
    const rotation = rotationOf(key, asker, made, graceEndsAt, now);
    if (rotation.kind !== "rotated") return rotation;
    const dropped = this.#keys.makeRoom(now);
    if (!dropped) return { kind: "too_many_keys" };
    this.#keys.put(rotation.previous);
    this.#keys.add(rotation.rotated);
    await this.#changed({ keyIds: [keyId, made.id, ...dropped] });
    return { ...rotation, dropped };
  }

  /** A key's name or end changed, and the account's plan and limits (key-rules.ts says what is refused). */
  async updateKey(keyId: string, update: KeyUpdate): Promise<Updated> {
    const refusal = updateRefusal(this.#keys.get(keyId), update, Date.now());
    if (refusal) return refusal;
    const { plan, ...own } = update;
    if (plan) this.#keys.setPlan(plan);
    this.#keys.put({ ...this.#keys.get(keyId)!, ...own });
    const now = Date.now();
    const others = this.#keys.all().filter((key) => key.id !== keyId && standingOf(key, now) === "live");
    const reached = [keyId, ...(plan ? others.map((key) => key.id) : [])];
    const key = this.#keys.get(keyId)!;
    await this.#changed({ keyIds: [keyId], plan: plan !== undefined });
    return { kind: "updated", key, reached };
  }

  /** The account's plan and limits, for every key of it from every isolate's next ask (within a lease). */
  async setPlan(plan: PlanChange): Promise<Usage> {
    this.#keys.setPlan(plan);
    const usage = this.usage();
    await this.#changed({ keyIds: [], plan: true });
    return usage;
  }

  /** Whether a live key of the account may read what its webhooks carry: they are delivered only while one does. */
  hasLiveReader(): boolean {
    const now = Date.now();
    return this.#keys.all().some((key) => standingOf(key, now) === "live" && key.scopes.includes(WEBHOOK_READER_SCOPE));
  }

  /** Counts a test event: null when it may be sent, else the milliseconds until one may. */
  admitTestEvent(now: number): number | null {
    const { times, retryAfterMs } = admitTestEvent(this.ctx.storage.kv.get<number[]>(TEST_EVENTS) ?? [], now);
    this.ctx.storage.kv.put(TEST_EVENTS, times);
    return retryAfterMs;
  }

  /** A write with an Idempotency-Key: it runs (holding the key), gets its first answer again, or is refused. */
  beginIdempotent(keyId: string, idempotencyKey: string, request: string): BeginAnswer {
    // A refused key is given nothing kept, and goes on to be refused; a key rotated away still gets its answers.
    if (standingOf(this.#keys.get(keyId), Date.now()) !== "live") return { kind: "bypass" };
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
    if (due !== undefined) void this.#wakeBy(due);
  }

  async #wakeBy(due: number): Promise<void> {
    const alarm = await this.ctx.storage.getAlarm();
    if (alarm === null || alarm > due) await this.ctx.storage.setAlarm(due);
  }

  /** A change the search's entries owe, owed with it and written before the answer. */
  async #changed(change: { keyIds: readonly string[]; plan?: boolean }): Promise<void> {
    this.#search.owe(change);
    await this.#writeSearch();
  }

  /** What the search is owed, written; a failure never fails the change, and the alarm tries again. */
  async #writeSearch(): Promise<void> {
    try {
      await this.#search.write();
    } catch (error) {
      console.error(
        JSON.stringify({
          level: "error",
          message: "an account's search entries were not written; its alarm tries again",
          account: this.ctx.id.name,
          error: String(error),
        }),
      );
      // No alarm set either: the next change, or the object's next start, writes them.
      await this.#wakeBy(Date.now() + SEARCH_RETRY_MS).catch(() => {});
    }
  }

  /** A caller with an account decides by the account's plan; one without sends its own (an address's, a partner's). */
  #limits(asked: Limits | undefined): Limits {
    const plan = this.#keys.plan();
    if (plan) return limitsFor({ id: this.ctx.id.name ?? "", ...plan });
    return asked ?? ANONYMOUS_LIMITS;
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
      // Set with the state, in its write; never past the search's retry while entries are owed.
      const due = expiresAt(state) * 1000;
      void this.ctx.storage.setAlarm(this.#search.owes ? Math.min(due, Date.now() + SEARCH_RETRY_MS) : due);
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

  /** Forgets windows, history and answers past their time (the keys and plan stay); writes what the search is owed. */
  async alarm(): Promise<void> {
    if (this.#search.owes) await this.#writeSearch();
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
      this.#search.owes ? (now + SEARCH_RETRY_MS) / 1000 : Infinity,
      stateLive ? expiresAt(state) : Infinity,
      nextPrune ?? Infinity,
      nextAnswerDue === undefined ? Infinity : nextAnswerDue / 1000,
    );
    if (next !== Infinity) await this.ctx.storage.setAlarm(next * 1000);
  }
}
