/**
 * One run of an endpoint's lane (docs/design/order-events.md#lanes): its rows due and then the events after its cursor
 * attempted, LANE_CONCURRENCY at once (fifo: one at a time, in order) and paced by its rateLimit, for at most
 * LANE_RUN_MS; its first tries that went through logged a flush at a time; then its health watched. Everything a run
 * needs is handed in, so tests bring their own receiver and clock.
 */
import type { AccountLiveness } from "../keys/live-account";
import { attemptDelivery, type AttemptContext, type FirstTry } from "./delivery-attempt";
import { OWED_NOTICE_RETRY_MS, watchEndpoint, type WatchContext } from "./endpoint-watch";
import {
  deliveryOf,
  dueDeliveries,
  dueInOrder,
  failPending,
  headOfLine,
  nextDueAt,
  noteSettledAhead,
  passSettledAhead,
  PENDING_CAP,
  pendingCount,
  releaseHeld,
  settledRows,
  keyedIn,
  type Settle,
  type LaneDelivery,
} from "./lane-deliveries";
import { failedRange, type SettledDelivery } from "./lane-settled";
import { endReplays, inReplay, moveReplay, replays, type Replay } from "./lane-replays";
import { laneEndpoint, type LaneEndpoint } from "./endpoint-table";
import {
  EXPIRED,
  MAX_SCAN_WINDOW,
  messageOf,
  messagesOf,
  SCAN_WINDOW,
  wantedAfter,
  type LaneMessage,
  type WantedEvent,
} from "./lane-feed";
import {
  appendSettled,
  appendToLog,
  cursorBefore,
  CURSOR_LAG,
  cursorMayStay,
  logCursor,
  pruneLog,
  type LoggedDelivery,
} from "./lane-log";
import { nextStartAfter, waitBeforeStart } from "./lane-pacing";
import { DELIVERY_LOG_MS, PRUNE_GAP_MS } from "./lane-retention";
import { liveSecrets } from "./webhook-secrets";
import { signersOf, type Signer } from "./webhook-signature";

/** How long one run starts deliveries; those in flight then are finished before it ends. */
export const LANE_RUN_MS = 20_000;
/** Deliveries one run starts at most: bounds its D1 reads (one per page) and its CPU. */
export const LANE_RUN_DELIVERIES = 600;
/** Deliveries read (and their events fetched from D1 in one query) at a time. */
const PAGE = 50;
/** Reads of the feed one page may take while they find nothing the endpoint wants. */
const READS_A_PAGE = 20;
/** A run flushes its log after this many first tries went through, or this long after its last flush. */
export const FLUSH_EVERY = 50;
export const FLUSH_MS = 1_000;
/** Rows failed, or pruned, per statement and run: a lane with a million left takes several runs, each short. */
export const LANE_BATCH = 1_000;

export interface LaneContext extends AttemptContext, WatchContext {
  endpointId: string;
  sealingKey: string;
  /** Whether the endpoint's account has a key neither revoked nor expired, or no key is seen yet. */
  accountLiveness(budget: string): Promise<AccountLiveness>;
  /** The object's storage's: runs `closure` as one transaction, undone should it throw. */
  transactionSync<T>(closure: () => T): T;
  /** Waits that long (a timer in the Worker; tests hand in their own). */
  sleep(ms: number): Promise<void>;
  /** The furthest event handed to the lane since its object started (0: none): FeedRead's `handed`. */
  handed: number;
  /** `handed` as the lane's previous run began: past what the lane has read, it was behind (a slow receiver's). */
  handedBefore: number;
  /** When the lane prunes next (Unix ms; 0: at once), kept by its object from run to run. */
  prunes: { dueAt: number };
}

/** What a run leaves: the next due (null: none), `attempted` (taken up) and `sent` (POSTed); or the endpoint gone. */
export type LaneRunResult =
  | { next: number | null; delivered: number; attempted: number; sent: number }
  | "endpoint gone";

/** What sending leaves, with its endpoint's row as it read it, for the health watch. */
type SentResult = "endpoint gone" | (Exclude<LaneRunResult, "endpoint gone"> & { endpoint?: LaneEndpoint });

/** Where the lane is in the feed: its cursor, or before its endpoint's first event. */
const cursorOf = (sql: SqlStorage, endpoint: LaneEndpoint) => logCursor(sql) ?? endpoint.from_seq;

/** Why the events a lane had not sent when its endpoint was enabled again failed. */
export const MISSED = "the endpoint was disabled when it was due (recover it to send it)";

/** Fails the events after the cursor (up to `upTo`, else the head) as one range, with `alsoFailed`'s, in one row. */
async function failAfterCursor(
  context: LaneContext,
  endpoint: LaneEndpoint,
  reason: string,
  upTo?: number,
  alsoFailed: () => SettledDelivery[] = () => [],
): Promise<void> {
  const { sql } = context;
  const cursor = cursorOf(sql, endpoint);
  const read = await wantedAfter(context.db, endpoint, cursor, CURSOR_LAG + 1, {
    upTo,
    window: MAX_SCAN_WINDOW,
    handed: context.handed,
  });
  const through = Math.min(read.head, upTo ?? read.head);
  // The events a run left to their rows, the cursor not moved for them (cursorMayStay), are not the range's.
  const { events } = read;
  const keyed = events.length === 0 ? new Set<number>() : keyedIn(sql, events[0]!.seq, events.at(-1)!.seq);
  const firstIndex = events.findIndex((event) => !keyed.has(event.seq));
  const first = events[firstIndex];
  const after = Math.max(cursor, (firstIndex === -1 ? events.at(-1) : events[firstIndex - 1])?.seq ?? cursor);
  // The rows leave with their entries or not at all: a failed write keeps them, attempts and all.
  context.transactionSync(() => {
    const settled = alsoFailed();
    if (through > after && (first !== undefined || (read.more && read.through < through)))
      settled.push(failedRange(after, through, reason, first?.createdAt ?? context.now(), context.now()));
    appendToLog(sql, { settled, from: cursor, through });
  });
}

/**
 * Settles what cannot be sent at all: every pending row but those `busy` (in flight, or settled and not yet flushed),
 * then every event after the cursor, fails with the reason, a batch a run.
 */
async function failEverything(
  context: LaneContext,
  endpoint: LaneEndpoint,
  reason: string,
  afterCursor: boolean,
  busy: readonly number[],
): Promise<LaneRunResult> {
  const failed = () => failPending(context.sql, reason, context.now(), LANE_BATCH, busy);
  if (afterCursor)
    await failAfterCursor(context, endpoint, reason, endpoint.head, () => [
      ...failed(),
      ...endReplays(context.sql).map(([after, through, madeAt]) =>
        failedRange(after, through, reason, madeAt, context.now()),
      ),
    ]);
  else {
    // Mid-run, the cursor stays: those past it are noted, so no read sends them again.
    context.transactionSync(() => {
      const entries = failed();
      noteSettledAhead(
        context.sql,
        entries.map((entry) => entry.seq),
        cursorOf(context.sql, endpoint),
      );
      appendSettled(context.sql, entries);
    });
  }
  const more = !afterCursor || nextDueAt(context.sql) !== null;
  return { next: more ? context.now() : null, delivered: 0, attempted: 0, sent: 0 };
}

export async function runLane(context: LaneContext): Promise<LaneRunResult> {
  const { sql } = context;
  const began = context.now();
  if (began >= context.prunes.dueAt) {
    context.prunes.dueAt = pruneLog(sql, began - DELIVERY_LOG_MS) ? began : began + PRUNE_GAP_MS;
  }
  const sent = await sendDue(context, began);
  if (sent === "endpoint gone") return sent;
  const { endpoint, ...result } = sent;
  const { owesNotice } = await watchEndpoint(context, { ...result, began, endpoint });
  if (!owesNotice) return result;
  const retry = context.now() + OWED_NOTICE_RETRY_MS;
  return { ...result, next: result.next === null ? retry : Math.min(result.next, retry) };
}

/** The endpoint as it is now and its signers, or what the run ends with; after first tries, the next run fails them. */
async function sendable(
  context: LaneContext,
  triedAfterCursor: boolean,
  busy: readonly number[],
): Promise<Sendable | LaneRunResult> {
  const failAll = (endpoint: LaneEndpoint, reason: string) =>
    failEverything(context, endpoint, reason, !triedAfterCursor, busy);
  const now = context.now();
  const endpoint = await laneEndpoint(context.db, context.endpointId);
  if (!endpoint) return "endpoint gone";
  if (endpoint.status !== "enabled") {
    // Its owner reads why in the delivery log: a leak's disabling names the key (docs/api.md#what-a-leak-ends).
    const leak =
      endpoint.disabled_for_leak === null
        ? ""
        : `: the key ${endpoint.disabled_for_leak}, which made or aimed it, was revoked as leaked`;
    return failAll(endpoint, `the endpoint is disabled${leak}`);
  }
  const liveness = await context.accountLiveness(endpoint.budget);
  if (liveness === "dead")
    return failAll(
      endpoint,
      "the endpoint's account has no live key with orders:read (revoked, expired, or without that scope)",
    );
  const secrets = await liveSecrets(context.sealingKey, endpoint, now);
  // Not a passing fault: a changed WEBHOOK_SECRETS_KEY would fail every time (docs/operations.md#webhooks).
  if (secrets === undefined)
    return failAll(endpoint, "the endpoint's secret cannot be opened (WEBHOOK_SECRETS_KEY changed?)");
  let imported: Promise<Signer[]> | undefined;
  return { endpoint, signers: () => (imported ??= signersOf(secrets)) };
}

/** An endpoint the run may send to, with its live secrets' keys, imported at its first POST. */
interface Sendable {
  endpoint: LaneEndpoint;
  signers(): Promise<readonly Signer[]>;
}

/** One thing a run may start: a row due, or an event's first try. */
type Next = { delivery: LaneDelivery | FirstTry; message: LaneMessage | null };

/**
 * A stretch of the feed tried in order with no rows: the events after the cursor, or a replay's. Its cursor moves past
 * every event up to the first whose try is not recorded yet (logged or given a row), never past one a crash would lose.
 */
class Stretch {
  /** Read and not started, in order; started and not recorded; went through and not flushed. */
  readonly waiting: Next[] = [];
  readonly open = new Set<number>();
  done: LoggedDelivery[] = [];
  readonly madeAt = new Map<number, number>();
  /** Every event wanted up to it is read; `more`: the stretch goes on past it. */
  readThrough: number;
  window = SCAN_WINDOW;
  more = true;
  /** Events pruned before it read them were failed as a range: the cursor must pass them. */
  expired = false;

  constructor(
    readonly from: number,
    readonly replay?: Replay,
  ) {
    this.readThrough = replay?.after ?? from;
  }

  /** Keeps the events read but those with a row already, or a replay's left to their own rows. */
  take(sql: SqlStorage, events: readonly WantedEvent[]): void {
    if (events.length === 0) return;
    const keyed = keyedIn(sql, events[0]!.seq, events.at(-1)!.seq);
    for (const event of events) {
      if (keyed.has(event.seq) || (this.replay !== undefined && !inReplay(this.replay, event.seq))) continue;
      this.madeAt.set(event.seq, event.createdAt);
      this.waiting.push({ delivery: { seq: event.seq, createdAt: event.createdAt }, message: messageOf(event.row) });
    }
  }

  get cursor(): number {
    const next = this.waiting[0]?.delivery.seq;
    return cursorBefore(next === undefined ? this.open : [...this.open, next], this.readThrough);
  }

  cursorMayStay(sql: SqlStorage, stood: number, through: number): boolean {
    if (this.expired || through <= stood) return false;
    const keyed = (pendingOnly: boolean) => keyedIn(sql, stood + 1, through, pendingOnly);
    return cursorMayStay(stood, through, this.madeAt.keys(), keyed(false), keyed(true));
  }

  /** The tries that went through up to the cursor, no longer kept here. */
  ready(): LoggedDelivery[] {
    const cursor = this.cursor;
    const ready = this.done.filter((entry) => entry[0] <= cursor);
    this.done = this.done.filter((entry) => entry[0] > cursor);
    return ready;
  }

  get left(): boolean {
    return this.waiting.length > 0 || this.more;
  }
}

/**
 * What a run tries without rows: the replays its owner recovered, oldest first, then the events after the cursor; and
 * the flushes that record them, with the rows the run settled.
 */
class FirstTries {
  private readonly feed: Stretch;
  /** The replays' stretches, then the feed's: the run tries the first with something left. */
  private readonly stretches: Stretch[];
  private settles = new Map<number, Settle>();
  private flushedAt: number;
  private readonly named: boolean;
  private readonly inTrouble: boolean;

  constructor(
    private readonly sql: SqlStorage,
    private readonly kv: SyncKvStorage,
    private readonly transactionSync: LaneContext["transactionSync"],
    cursor: number,
    now: number,
  ) {
    this.named = kv.get("endpointId") !== undefined;
    this.inTrouble = nextDueAt(sql) !== null;
    this.feed = new Stretch(cursor);
    this.stretches = [...replays(sql).map((replay) => new Stretch(replay.after, replay)), this.feed];
    this.flushedAt = now;
  }

  private get current(): Stretch {
    return this.stretches.find((stretch) => stretch.left) ?? this.feed;
  }

  get waiting(): Next[] {
    return this.current.waiting;
  }

  get more(): boolean {
    return this.current.more;
  }

  /** Reads the current stretch's next page of events wanted, leaving out those with a row already. */
  async read(context: LaneContext, endpoint: LaneEndpoint): Promise<void> {
    const stretch = this.current;
    const { replay } = stretch;
    const read = await wantedAfter(context.db, endpoint, stretch.readThrough, PAGE, {
      window: stretch.window,
      ...(replay === undefined ? { handed: context.handed } : { upTo: replay.seq }),
    });
    stretch.window = read.events.length === 0 ? Math.min(2 * stretch.window, MAX_SCAN_WINDOW) : SCAN_WINDOW;
    // Pruned past the cursor: one row for them, not past the read's head, if the lane was owed them (order-events.md).
    const behind = this.inTrouble || context.handedBefore > stretch.readThrough;
    const lost = Math.min(read.expired ?? 0, replay?.seq ?? (behind ? read.head : 0));
    if (lost > stretch.readThrough) {
      const error = `${EXPIRED}: the events after evt_${stretch.readThrough} up to evt_${lost} were pruned first`;
      appendSettled(this.sql, [failedRange(stretch.readThrough, lost, error, context.now(), context.now())]);
      stretch.expired = true;
    }
    stretch.readThrough = Math.min(Math.max(read.through, read.expired ?? 0), replay?.seq ?? Number.MAX_SAFE_INTEGER);
    stretch.more = read.more && (replay === undefined || stretch.readThrough < replay.seq);
    stretch.take(this.sql, read.events);
  }

  /** A try started: open in the stretch it was read into, which may no longer be the current one. */
  started(seq: number): void {
    this.stretches.find((stretch) => stretch.madeAt.has(seq))?.open.add(seq);
  }

  /** A try recorded: with its log entry when it went through; flushed when enough are waiting or it is time. */
  recorded(seq: number, logged: LoggedDelivery | undefined, now: number): void {
    const stretch = this.stretches.find((each) => each.open.has(seq));
    stretch?.open.delete(seq);
    if (logged !== undefined) stretch?.done.push(logged);
    this.flushIfDue(now);
  }

  /** A row settled: it stays pending (so a crash sends it again) until the flush moves it, with the others. */
  settled(settle: Settle, now: number, fifo: boolean): void {
    this.settles.set(settle.seq, settle);
    // A fifo line's head holds the rest until it leaves.
    if (fifo) this.flush(now);
    else this.flushIfDue(now);
  }

  /** Rows settled and not yet moved: none is due again. */
  get settling(): number[] {
    return [...this.settles.keys()];
  }

  private get unflushed(): number {
    return this.stretches.reduce((sum, stretch) => sum + stretch.done.length, this.settles.size);
  }

  private flushIfDue(now: number): void {
    if (this.unflushed >= FLUSH_EVERY || now - this.flushedAt >= FLUSH_MS) this.flush(now);
  }

  /**
   * Writes what went through up to the cursor, the rows settled and a replay's deliveries, and the cursor, in one row;
   * then moves the replays on; nothing in a lane wiped meanwhile. All of it or, should a statement fail, none: what it
   * held is kept for the next flush, as the rows it would settle stay pending.
   */
  flush(now: number): void {
    if (this.wiped) return;
    const held = { settles: new Map(this.settles), done: this.stretches.map((stretch) => stretch.done) };
    try {
      this.transactionSync(() => this.write(now));
    } catch (error) {
      this.settles = held.settles;
      for (const [index, stretch] of this.stretches.entries()) stretch.done = held.done[index]!;
      throw error;
    }
  }

  private write(now: number): void {
    const settled: SettledDelivery[] = [];
    for (const stretch of this.stretches) {
      if (stretch.replay === undefined) continue;
      for (const [seq, at, status, durationMs, response] of stretch.ready())
        settled.push({
          seq,
          outcome: "delivered",
          attempts: 1,
          lastStatus: status,
          lastError: null,
          createdAt: stretch.madeAt.get(seq) ?? at,
          settledAt: now,
          attemptLog: [[at, status, durationMs, response, null]],
        });
    }
    const logged = logCursor(this.sql) ?? this.feed.from;
    const through = Math.max(this.feed.cursor, logged);
    settled.push(...settledRows(this.sql, [...this.settles.values()], now, through));
    this.settles.clear();
    const delivered = this.feed.ready();
    // A cursor alone is a row written: a run whose events all got rows leaves it for the flush that writes the next.
    const stays = delivered.length + settled.length === 0 && this.feed.cursorMayStay(this.sql, logged, through);
    appendToLog(this.sql, { delivered, settled, from: this.feed.from, through: stays ? undefined : through });
    for (const { replay, cursor } of this.stretches) if (replay !== undefined) moveReplay(this.sql, replay.seq, cursor);
    passSettledAhead(this.sql, stays ? logged : through);
    this.flushedAt = now;
  }

  /** Whether FLUSH_EVERY answers wait behind an open try: nothing starts until it answers, bounding a re-send. */
  get held(): boolean {
    return this.unflushed - this.settles.size >= FLUSH_EVERY && this.stretches.some((each) => each.open.size > 0);
  }

  get wiped(): boolean {
    return this.named && this.kv.get("endpointId") === undefined;
  }

  /** Whether events wait to be read or started. */
  get left(): boolean {
    return this.stretches.some((stretch) => stretch.left);
  }
}

/**
 * The pool: rows due and first tries started in turn, LANE_CONCURRENCY at once, paced. The endpoint is read with each
 * page and each row just before its start, so a disabling, a new URL or secret, or a settled row holds at once. A run
 * ends only once every POST it started is recorded.
 */
async function sendDue(context: LaneContext, began: number): Promise<SentResult> {
  const { sql } = context;
  const inFlight = new Map<number, Promise<void>>();
  let page: Next[] = [];
  let current: Sendable | undefined;
  let firstTries: FirstTries | undefined;
  let verdict: LaneRunResult | undefined;
  let nextStartAt = began;
  let attempted = 0;
  let sent = 0;
  let delivered = 0;
  let stopped = false;
  let capped = false;
  let retriedThrough = false;
  let failure: unknown;
  const fifo = () => current?.endpoint.ordering === "fifo";

  /** The endpoint read again and the account asked: false when the run ends with a verdict (failing what waits). */
  const readEndpoint = async (): Promise<boolean> => {
    const ready = await sendable(context, firstTries !== undefined, [
      ...inFlight.keys(),
      ...(firstTries?.settling ?? []),
    ]);
    if (ready === "endpoint gone" || !("endpoint" in ready)) {
      verdict = ready;
      return false;
    }
    current = ready;
    return true;
  };

  const nextDelivery = async (): Promise<Next | undefined> => {
    // Before each start, the lane's word on the account (renewed every 5 s): a revocation mid-run holds at once.
    if (current !== undefined && (await context.accountLiveness(current.endpoint.budget)) === "dead")
      if (!(await readEndpoint())) return undefined;
    for (;;) {
      if (page.length === 0 && (firstTries === undefined || firstTries.waiting.length === 0)) {
        // Nothing left to read nor due: the run ends without reading its endpoint again.
        if (firstTries !== undefined && !firstTries.more) {
          const due = nextDueAt(sql);
          if (due === null || due > context.now()) return undefined;
        }
        if (!(await readEndpoint())) return undefined;
        const ready = current!;
        const { resumed_seq: resumed } = ready.endpoint;
        if (firstTries === undefined && resumed !== null && cursorOf(sql, ready.endpoint) < resumed) {
          // Enabled again: what was not sent by then fails at once, before anything newer goes.
          await failAfterCursor(context, ready.endpoint, MISSED, resumed);
        }
        firstTries ??= new FirstTries(
          sql,
          context.kv,
          context.transactionSync,
          cursorOf(sql, ready.endpoint),
          context.now(),
        );
        const busy = [...inFlight.keys(), ...firstTries.settling];
        // A fifo endpoint takes the oldest pending first, and nothing behind it until it is settled.
        const due = fifo() ? dueInOrder(sql, context.now(), PAGE, busy) : dueDeliveries(sql, context.now(), PAGE, busy);
        if (due.length > 0) {
          const messages = await messagesOf(
            context.db,
            due.map((delivery) => delivery.seq),
          );
          page = due.map((delivery) => ({ delivery, message: messages.get(delivery.seq) ?? null }));
        } else {
          if (fifo() && headOfLine(sql) !== undefined) return undefined;
          if (!firstTries.more) return undefined;
          if (pendingCount(sql) >= PENDING_CAP) {
            capped = true;
            return undefined;
          }
          // Empty windows are read on without the endpoint, READS_A_PAGE at most; then the next run goes on.
          let reads = 0;
          do await firstTries.read(context, ready.endpoint);
          while (firstTries.waiting.length === 0 && firstTries.more && ++reads < READS_A_PAGE);
          if (firstTries.waiting.length === 0) return undefined;
        }
      }
      if (page.length === 0) {
        // A fifo endpoint's first try waits while a row holds the line (one that failed before it).
        if (fifo() && (headOfLine(sql) !== undefined || inFlight.size > 0)) return undefined;
        // The lane wiped meanwhile (its endpoint deleted): nothing more goes out.
        if (firstTries!.wiped) return undefined;
        const next = firstTries!.waiting.shift()!;
        // One acted on meanwhile has a row now, which the rows' turn sends.
        if (deliveryOf(sql, next.delivery.seq) === undefined) return next;
        continue;
      }
      const { delivery, message } = page.shift()!;
      const fresh = deliveryOf(sql, delivery.seq);
      if (
        fresh?.outcome === "pending" &&
        fresh.due_at !== null &&
        fresh.due_at <= context.now() &&
        !inFlight.has(fresh.seq)
      ) {
        // One that failed before it holds this one: the run ends, and the next is due when it is.
        if (fifo() && headOfLine(sql)?.seq !== fresh.seq) return undefined;
        return { delivery: fresh, message };
      }
    }
  };

  try {
    while (
      !stopped &&
      failure === undefined &&
      attempted < LANE_RUN_DELIVERIES &&
      context.now() - began < LANE_RUN_MS
    ) {
      const wait = firstTries?.held
        ? "full"
        : waitBeforeStart(context.now(), nextStartAt, inFlight.size, fifo() ? 1 : undefined);
      if (wait === "full") {
        await Promise.race(inFlight.values());
        continue;
      }
      if (wait > 0) {
        await context.sleep(wait);
        continue;
      }
      const next = await nextDelivery();
      if (next === undefined || current === undefined) break;
      const { endpoint, signers } = current;
      const tries = firstTries!;
      attempted += 1;
      nextStartAt = nextStartAfter(context.now(), endpoint.rate_limit);
      const { seq } = next.delivery;
      const first = !("outcome" in next.delivery);
      if (first) tries.started(seq);
      inFlight.set(
        seq,
        attemptDelivery(context, endpoint, signers, next.delivery, next.message)
          .then((attempt) => {
            if (first) tries.recorded(seq, "expired" in attempt ? undefined : attempt.logged, context.now());
            const settle = "expired" in attempt ? attempt.expired : attempt.settle;
            if (settle) tries.settled(settle, context.now(), fifo());
            if ("expired" in attempt) return;
            sent += 1;
            if (attempt.outcome.kind === "delivered") delivered += 1;
            if (attempt.outcome.kind === "delivered" && !first) retriedThrough = true;
            if (attempt.outcome.kind === "gone") stopped = true;
          })
          .catch((error: unknown) => {
            failure ??= error;
          })
          .finally(() => inFlight.delete(seq)),
      );
    }
  } finally {
    await Promise.allSettled(inFlight.values());
    // What went through is written even when the run fails: none of it is sent again.
    firstTries?.flush(context.now());
  }
  if (failure !== undefined) throw failure;
  if (verdict !== undefined && (verdict === "endpoint gone" || attempted === 0)) return verdict;
  // Held at its cap, a lane whose retry got through sends what it held now, then the feed behind it.
  if (capped && retriedThrough) releaseHeld(sql, context.now());
  const feedLeft = !capped && (firstTries?.left ?? false);
  const head = fifo() ? headOfLine(sql) : undefined;
  const due = fifo() ? (head === undefined ? null : head.due_at) : nextDueAt(sql);
  const next = feedLeft && (!fifo() || head === undefined) ? context.now() : due;
  return {
    next: next === null ? null : Math.max(next, context.now()),
    delivered,
    attempted,
    sent,
    endpoint: current?.endpoint,
  };
}
