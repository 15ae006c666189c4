import { DurableObject } from "cloudflare:workers";
import { accountLiveness, type AccountLiveness } from "../keys/live-account";
import { logLine } from "../lib/log";
import { TtlCache } from "../lib/ttl-cache";
import { configOf } from "../framework/middleware/load-config";
import type { ConfigResult } from "../framework/read-config";
import { attemptJson, type LaneAttempt } from "./lane-attempts";
import {
  addNotices,
  addRetried,
  DELIVERIES_DDL,
  deliveryOf,
  keyedIn,
  newestDeliveries,
  PENDING_CAP,
  pendingCount,
  pendingSeqs,
  resetDelivery,
  type LaneDelivery,
  behindInLine,
  headOfLine,
} from "./lane-deliveries";
import { failedSince, newestSettled, ownSettled, settledOf, type SettledDelivery } from "./lane-settled";
import { appendSettled, LOG_DDL, logCursor, loggedDelivery, newestLogged, type LoggedDelivery } from "./lane-log";
import { firstMadeSince, MAX_SCAN_WINDOW, newestWanted, wantedAfter } from "./lane-feed";
import { runLane } from "./lane-run";
import { addReplay, inReplay, leaveToRow, REPLAYS_DDL, replays } from "./lane-replays";
import { laneEndpoint, type EndpointOrdering, type LaneEndpoint } from "./endpoint-table";
import { sealingKeyOf } from "./webhook-secrets";
import { deliveryIdOf, eventIdOf, laneOf, type DeliveryView } from "./lane-calls";
import { backoffMs } from "../lib/backoff";

/**
 * The most a lane's work waits after it is woken, should the run the wake began be lost with the object: its alarm is
 * armed this far ahead, at most once a wake and never while one is armed sooner.
 */
export const WATCHDOG_MS = 60_000;
/** Runs one wake makes in a row while more is due at once; then its alarm goes on. */
const RUNS_A_WAKE = 10;

/** The longest wait before a failed run (D1 or KV down) is tried again: bounds how late delivery resumes. */
export const FAILED_RUN_RETRY_MAX_MS = 10_000;
/** The wait after the `failed`th run in a row failed: 1, 2, 4, 8 s, then FAILED_RUN_RETRY_MAX_MS. */
export const failedRunRetryMs = (failed: number) => backoffMs(failed, FAILED_RUN_RETRY_MAX_MS);

const iso = (ms: number) => new Date(ms).toISOString();

const DDL = DELIVERIES_DDL + LOG_DDL + REPLAYS_DDL;

/**
 * What a lane keeps of a hand-off: its endpoint's id (once) and the notices (negated ids), each a row; the events are
 * read from the feed. How many of them were new to it.
 */
export function takeHandOff(storage: DurableObjectStorage, endpointId: string, seqs: readonly string[]): number {
  const { sql, kv } = storage;
  // Each put is a row billed: the name is written once.
  if (kv.get("endpointId") === undefined) kv.put("endpointId", endpointId);
  const keys = seqs.map(Number);
  const added = addNotices(
    sql,
    keys.filter((seq) => seq < 0),
    Date.now(),
  );
  const cursor = logCursor(sql) ?? 0;
  const events = keys.filter((seq) => seq > cursor);
  if (events.length === 0) return added;
  const keyed = keyedIn(sql, Math.min(...events), Math.max(...events));
  return added + events.filter((seq) => !keyed.has(seq)).length;
}

/**
 * One webhook endpoint's lane (docs/design/order-events.md#lanes): a Durable Object named by the endpoint's id. Woken
 * when events its endpoint wants are written, it reads them from the feed after its cursor and sends them; what went
 * through is logged a block at a time, and only what did not (or what its owner acted on) gets a row. A receiver that
 * hangs holds back only its own lane.
 */
export class WebhookLane extends DurableObject<Env> {
  private readonly liveAccounts = new TtlCache<string, AccountLiveness>(4);
  /** The runs a wake began, while they last: the alarm waits for them, as a test may; a wake meanwhile asks more. */
  running: Promise<void> | undefined;
  private wokenAgain = false;
  /** The furthest event handed to this instance. Safe: lost with it, the dispatcher's mark in D1 is the floor. */
  private handed = 0;
  private handedAtLastRun = 0;
  /** The vars, parsed once for each env this instance runs with (a test may hand it another). */
  private readonly configs = new WeakMap<Env, ConfigResult>();
  private readonly prunes = { dueAt: 0 };

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(DDL);
  }

  /**
   * Wakes the lane for the events in `seqs` (it reads them from the feed itself) and keeps the notices among them (a
   * notice's negated id); again after a crash adds nothing. How many were new to it.
   */
  async enqueue(endpointId: string, seqs: readonly string[]): Promise<number> {
    this.handed = Math.max(this.handed, ...seqs.map(Number));
    const handed = takeHandOff(this.ctx.storage, endpointId, seqs);
    await this.wake();
    return handed;
  }

  /** The newest deliveries, with their newest attempts; a fifo endpoint's say which one holds them. */
  async deliveries(
    endpointId: string,
    limit: number,
    attemptsEach: number,
    ordering: EndpointOrdering = "concurrent",
  ): Promise<DeliveryView[]> {
    const { sql } = this.ctx.storage;
    const endpoint = await laneEndpoint(this.env.DB, endpointId);
    const cursor = endpoint === null ? 0 : (logCursor(sql) ?? endpoint.from_seq);
    const head = ordering === "fifo" ? await this.headOfLine(endpoint, cursor) : undefined;
    const pending = newestDeliveries(sql, limit);
    const shown = new Set<number>();
    const views: { at: number; seq: number; view: DeliveryView }[] = [];
    const show = (seq: number, at: number, view: () => DeliveryView) => {
      if (shown.has(seq)) return;
      shown.add(seq);
      views.push({ at, seq, view: view() });
    };
    // Newest word first: a row, what settled (own before a range's), the log's first tries, what waits in the feed.
    for (const row of pending) show(row.seq, row.created_at, () => this.view(endpointId, row, attemptsEach, head));
    const settled = newestSettled(sql, limit);
    for (const entry of settled)
      if (entry.after === undefined)
        show(entry.seq, entry.createdAt, () => settledView(endpointId, entry, attemptsEach));
    for (const entry of settled) {
      if (entry.after === undefined || entry.after >= entry.seq) continue;
      const range = endpoint === null ? [] : await this.rangeEvents(endpoint, entry, limit);
      if (range.length === 0) show(entry.seq, entry.createdAt, () => settledView(endpointId, entry, attemptsEach));
      for (const event of range)
        show(event.seq, event.createdAt, () =>
          settledView(endpointId, { ...entry, seq: event.seq, createdAt: event.createdAt }, attemptsEach),
        );
    }
    if (endpoint !== null)
      for (const replay of replays(sql))
        for (const event of await this.rangeEvents(endpoint, replay, limit))
          if (inReplay(replay, event.seq))
            show(event.seq, event.createdAt, () => waitingView(endpointId, event.seq, event.createdAt, head));
    for (const entry of newestLogged(sql, limit))
      show(entry[0], entry[1], () => loggedView(endpointId, entry, attemptsEach));
    if (endpoint !== null)
      for (const { seq, createdAt } of await newestWanted(this.env.DB, endpoint, cursor, limit))
        show(seq, createdAt, () => waitingView(endpointId, seq, createdAt, head));
    const notices = views.some((each) => each.seq < 0);
    return views
      .sort((a, b) => (notices ? b.at - a.at : 0) || Math.abs(b.seq) - Math.abs(a.seq))
      .slice(0, limit)
      .map(({ view }) => view);
  }

  /** One delivery due again now, its schedule afresh; null when the lane has none for that event. */
  async retry(endpointId: string, seq: number, attemptsEach: number): Promise<DeliveryView | null> {
    const { sql } = this.ctx.storage;
    const now = Date.now();
    let row = resetDelivery(sql, seq, now);
    if (row === undefined) {
      // Acted on by its owner, it gets a row of its own, with what it had.
      const settled = settledOf(sql, seq);
      const logged = settled === undefined ? loggedDelivery(sql, seq) : undefined;
      if (settled !== undefined && settled.after === undefined)
        row = addRetried(sql, seq, settled, settled.createdAt, now);
      else if (logged !== undefined) {
        const [, at, status, durationMs, response] = logged;
        const attempt: LaneAttempt = [at, status, durationMs, response, null];
        row = addRetried(
          sql,
          seq,
          { attempts: 1, lastStatus: status, lastError: null, attemptLog: [attempt] },
          at,
          now,
        );
      } else {
        // Failed in a range, or replayed: behind the cursor, it is sent only with a row or by its replay.
        const replayed = replays(sql).some((replay) => inReplay(replay, seq));
        const event = await this.feedEvent(endpointId, seq, settled !== undefined || replayed);
        if (event?.ordering === "concurrent" || (event !== undefined && settled !== undefined)) {
          row = addRetried(sql, seq, undefined, event.createdAt, now);
          if (replayed) leaveToRow(sql, seq);
        }
        // In a fifo line a row would go before the events ahead of it: it waits its turn, as it is.
        else if (event !== undefined) {
          await this.wake();
          return waitingView(endpointId, seq, event.createdAt, undefined);
        }
      }
    }
    if (row === undefined) return null;
    await this.wake();
    return this.view(endpointId, row, attemptsEach);
  }

  /** Failed deliveries made since `since` due again now, `limit` at most; how many, and whether more remain. */
  async recover(endpointId: string, since: number, limit: number): Promise<{ recovered: number; more: boolean }> {
    const { sql } = this.ctx.storage;
    const now = Date.now();
    const endpoint = await laneEndpoint(this.env.DB, endpointId);
    // Never past the cap: its rows are read without an index.
    const room = Math.min(limit, PENDING_CAP - pendingCount(sql));
    const entries = failedSince(sql, since);
    // A range's events with a row of their own since (an owner's retry), pending or settled, are not its to send.
    const own = new Set(entries.length === 0 ? [] : [...ownSettled(sql), ...pendingSeqs(sql)]);
    let recovered = 0;
    let more = false;
    for (const entry of entries) {
      if (deliveryOf(sql, entry.seq) !== undefined && entry.after === undefined) continue;
      if (recovered >= room) {
        more = true;
        break;
      }
      if (entry.after === undefined) {
        addRetried(sql, entry.seq, entry, entry.createdAt, now);
        recovered += 1;
        continue;
      }
      if (endpoint === null) continue;
      const range = await this.madeSince(entry, since);
      if (range === null) continue;
      // Recovered in pages of `limit`, each leaving it the rest.
      const read = await wantedAfter(this.env.DB, endpoint, range.after!, room - recovered, {
        upTo: range.seq,
        window: MAX_SCAN_WINDOW,
      });
      const rest = read.more && read.through < range.seq;
      // Its events pruned since, it stays as it is: failed, and said so.
      if (read.events.length === 0 && !rest) continue;
      // One row replays them, whatever their number.
      const taken = read.events.filter(({ seq }) => !own.has(seq));
      const through = rest ? read.through : range.seq;
      if (taken.length > 0) addReplay(sql, range.after!, through, [...own], range.createdAt);
      recovered += taken.length;
      appendSettled(sql, [{ ...range, after: through, settledAt: now }]);
      more ||= rest;
    }
    await this.wake();
    return { recovered, more };
  }

  /** The endpoint was deleted: the lane and everything in it go. */
  async wipe(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    // This instance may still be called (a late pass), so the tables are made again, empty.
    this.ctx.storage.sql.exec(DDL);
  }

  /** The watchdog, or a retry due: runs the lane, after the runs a wake began if they are still going. */
  async alarm(): Promise<void> {
    await this.running;
    this.startRuns();
    await this.running;
  }

  /** Starts runs now (one more after the current, if any), with the watchdog armed should they be lost. */
  private async wake(): Promise<void> {
    const watchdog = Date.now() + WATCHDOG_MS;
    const due = await this.ctx.storage.getAlarm();
    if (due === null || due > watchdog) await this.ctx.storage.setAlarm(watchdog);
    this.startRuns();
  }

  private startRuns(): void {
    if (this.running !== undefined) {
      this.wokenAgain = true;
      return;
    }
    this.running = this.runWhileDue().finally(() => {
      this.running = undefined;
    });
  }

  /** Runs while more is due at once, RUNS_A_WAKE at most; then the alarm for what is due next, unless one is sooner. */
  private async runWhileDue(): Promise<void> {
    for (let runs = 1; ; runs++) {
      this.wokenAgain = false;
      const next = await this.runOnce();
      if (next === "gone") return;
      const now = Date.now();
      const again = this.wokenAgain || (next !== null && next <= now);
      if (again && runs < RUNS_A_WAKE) continue;
      const at = again ? now : next;
      if (at === null) return;
      // One due already is the one running these runs, or would find nothing more than they did.
      const due = await this.ctx.storage.getAlarm();
      if (due === null || due <= now || due > at) await this.ctx.storage.setAlarm(at);
      return;
    }
  }

  /**
   * One run; when the next is due. Never throws, as the platform gives up on an alarm that keeps failing: a failed run
   * is tried again with backoff, its work still owed here.
   */
  private async runOnce(): Promise<number | null | "gone"> {
    const storage = this.ctx.storage.kv;
    const endpointId = storage.get<string>("endpointId");
    if (endpointId === undefined) return null;
    try {
      const config = configOf(this.env, this.configs);
      if (!config.ok) throw new Error(`invalid configuration: ${config.problems.join("; ")}`);
      const handedNow = this.handed;
      const result = await runLane({
        sql: this.ctx.storage.sql,
        kv: storage,
        transactionSync: (closure) => this.ctx.storage.transactionSync(closure),
        db: this.env.DB,
        endpointId,
        fetch: (input, init) => fetch(input, init),
        now: Date.now,
        sleep: (ms) => new Promise((resolve) => setTimeout(resolve, ms)),
        retrySeconds: config.config.webhookRetrySeconds,
        health: config.config.webhookHealth,
        handToLane: (recipient, seqs) => laneOf(this.env, recipient).enqueue(recipient, seqs),
        sealingKey: sealingKeyOf(this.env),
        accountLiveness: (account) => accountLiveness(this.env.ACCOUNTS, account, this.liveAccounts),
        handed: this.handed,
        handedBefore: this.handedAtLastRun,
        prunes: this.prunes,
      });
      // A run that failed may not have read what it was handed: the next is not behind for it.
      this.handedAtLastRun = handedNow;
      if (result === "endpoint gone") {
        await this.wipe();
        return "gone";
      }
      if (storage.get("failedRuns") !== undefined) storage.delete("failedRuns");
      return result.next;
    } catch (error) {
      const failed = (storage.get<number>("failedRuns") ?? 0) + 1;
      storage.put("failedRuns", failed);
      const next = Date.now() + failedRunRetryMs(failed);
      logLine("warn", "webhook-lane", "a lane's run failed; it is tried again", {
        endpointId,
        failedRuns: failed,
        retryAt: iso(next),
        error: String(error),
      });
      return next;
    }
  }

  /** A failed range's part made since `since` (what came before stays failed, a range of its own); null if none. */
  private async madeSince(range: SettledDelivery, since: number): Promise<SettledDelivery | null> {
    if (range.createdAt >= since) return range;
    const first = await firstMadeSince(this.env.DB, range.after!, range.seq, since);
    if (first === null) return null;
    if (first.seq - 1 > range.after!) appendSettled(this.ctx.storage.sql, [{ ...range, seq: first.seq - 1 }]);
    return { ...range, after: first.seq - 1, createdAt: first.createdAt };
  }

  /** The event `seq` from the feed if the endpoint wants it: `behind` the cursor (failed, replayed), or not tried. */
  private async feedEvent(
    endpointId: string,
    seq: number,
    behind: boolean,
  ): Promise<{ createdAt: number; ordering: EndpointOrdering } | undefined> {
    const endpoint = await laneEndpoint(this.env.DB, endpointId);
    if (endpoint === null) return undefined;
    if (!behind && seq <= (logCursor(this.ctx.storage.sql) ?? endpoint.from_seq)) return undefined;
    const [event] = (await wantedAfter(this.env.DB, endpoint, seq - 1, 1)).events;
    return event?.seq === seq ? { createdAt: event.createdAt, ordering: endpoint.ordering } : undefined;
  }

  private rangeEvents(endpoint: LaneEndpoint, range: Pick<SettledDelivery, "seq" | "after">, limit: number) {
    return newestWanted(this.env.DB, endpoint, range.after ?? range.seq, limit, range.seq);
  }

  /** A fifo endpoint's next delivery: its oldest pending row, else its replay's next event, else the feed's. */
  private async headOfLine(endpoint: LaneEndpoint | null, cursor: number): Promise<number | undefined> {
    const row = headOfLine(this.ctx.storage.sql);
    if (row !== undefined || endpoint === null) return row?.seq;
    const [replay] = replays(this.ctx.storage.sql);
    if (replay !== undefined) {
      const read = await wantedAfter(this.env.DB, endpoint, replay.after, replay.skip.length + 1, {
        upTo: replay.seq,
        window: MAX_SCAN_WINDOW,
      });
      const next = read.events.find((event) => inReplay(replay, event.seq));
      if (next !== undefined) return next.seq;
    }
    return (await wantedAfter(this.env.DB, endpoint, cursor, 1)).events[0]?.seq;
  }

  private view(endpointId: string, row: LaneDelivery, attemptsEach: number, head?: number): DeliveryView {
    return {
      id: deliveryIdOf(endpointId, row.seq),
      eventId: eventIdOf(row.seq),
      attempts: row.attempts,
      lastStatus: row.last_status,
      lastError: row.last_error,
      nextAttemptAt: iso(row.due_at!),
      heldBehind: head !== undefined && behindInLine(row.seq, head) ? eventIdOf(head) : null,
      outcome: "pending",
      createdAt: iso(row.created_at),
      attemptLog: newestOf(row.attempt_log, attemptsEach),
    };
  }
}

const newestOf = (log: readonly LaneAttempt[], each: number) => [...log].reverse().slice(0, each).map(attemptJson);

function settledView(endpointId: string, entry: SettledDelivery, attemptsEach: number): DeliveryView {
  return {
    id: deliveryIdOf(endpointId, entry.seq),
    eventId: eventIdOf(entry.seq),
    attempts: entry.attempts,
    lastStatus: entry.lastStatus,
    lastError: entry.lastError,
    nextAttemptAt: null,
    heldBehind: null,
    outcome: entry.outcome,
    createdAt: iso(entry.createdAt),
    attemptLog: newestOf(entry.attemptLog, attemptsEach),
  };
}

/** A first try that went through, as the log keeps it. */
function loggedView(
  endpointId: string,
  [seq, at, status, durationMs, response]: LoggedDelivery,
  attemptsEach: number,
): DeliveryView {
  return {
    id: deliveryIdOf(endpointId, seq),
    eventId: eventIdOf(seq),
    attempts: 1,
    lastStatus: status,
    lastError: null,
    nextAttemptAt: null,
    heldBehind: null,
    outcome: "delivered",
    createdAt: iso(at),
    attemptLog: newestOf([[at, status, durationMs, response, null]], attemptsEach),
  };
}

/** An event after the cursor, not tried yet: pending, due since it was written. */
function waitingView(endpointId: string, seq: number, createdAt: number, head: number | undefined): DeliveryView {
  return {
    id: deliveryIdOf(endpointId, seq),
    eventId: eventIdOf(seq),
    attempts: 0,
    lastStatus: null,
    lastError: null,
    nextAttemptAt: iso(createdAt),
    heldBehind: head !== undefined && behindInLine(seq, head) ? eventIdOf(head) : null,
    outcome: "pending",
    createdAt: iso(createdAt),
    attemptLog: [],
  };
}
