import { DurableObject } from "cloudflare:workers";
import { accountLiveness, type AccountLiveness } from "../keys/live-account";
import { logLine } from "../lib/log";
import { TtlCache } from "../lib/ttl-cache";
import { readConfig } from "../framework/read-config";
import { ATTEMPTS_DDL, attemptsOf, type LaneAttempt } from "./lane-attempts";
import {
  addDeliveries,
  DELIVERIES_DDL,
  deliveryCounts,
  failedSince,
  newestDeliveries,
  nextDueAt,
  recoverFailed,
  resetDelivery,
  type LaneDelivery,
  behindInLine,
  headOfLine,
} from "./lane-deliveries";
import { runLane } from "./lane-run";
import type { EndpointOrdering } from "./endpoint-table";
import { sealingKeyOf } from "./webhook-secrets";
import { deliveryIdOf, eventIdOf, laneOf, type DeliveryView } from "./lane-calls";
import { backoffMs } from "../lib/backoff";

/** The longest wait before a failed run (D1 or KV down) is tried again: bounds how late delivery resumes. */
export const FAILED_RUN_RETRY_MAX_MS = 10_000;
/** The wait after the `failed`th run in a row failed: 1, 2, 4, 8 s, then FAILED_RUN_RETRY_MAX_MS. */
export const failedRunRetryMs = (failed: number) => backoffMs(failed, FAILED_RUN_RETRY_MAX_MS);

const iso = (ms: number) => new Date(ms).toISOString();
const attemptJson = (attempt: LaneAttempt) => ({
  at: iso(attempt.at),
  status: attempt.status,
  durationMs: attempt.duration_ms,
  response: attempt.response,
  error: attempt.error,
});

/**
 * One webhook endpoint's lane (docs/design/order-events.md#lanes): a Durable Object named by the endpoint's id, keeping
 * its deliveries and attempts in its own SQLite and sending them from its alarm, so a receiver that hangs holds back
 * only its own deliveries.
 */
export class WebhookLane extends DurableObject<Env> {
  private readonly liveAccounts = new TtlCache<string, AccountLiveness>(4);

  constructor(ctx: DurableObjectState, env: Env) {
    super(ctx, env);
    ctx.storage.sql.exec(DELIVERIES_DDL + ATTEMPTS_DDL);
  }

  /** Hands the lane events to deliver (a dispatch pass; again after a crash adds nothing); how many were new. */
  async enqueue(endpointId: string, seqs: readonly string[]): Promise<number> {
    // Each put is a row billed: the name is written once.
    if (this.ctx.storage.kv.get("endpointId") === undefined) this.ctx.storage.kv.put("endpointId", endpointId);
    const added = addDeliveries(this.ctx.storage.sql, seqs.map(Number), Date.now());
    // Even when nothing is new: a lane reset between its rows and its alarm must still run.
    await this.runSoon();
    return added;
  }

  /** The newest deliveries, with their newest attempts; a fifo endpoint's say which one holds them. */
  async deliveries(
    endpointId: string,
    limit: number,
    attemptsEach: number,
    ordering: EndpointOrdering = "concurrent",
  ): Promise<DeliveryView[]> {
    const rows = newestDeliveries(this.ctx.storage.sql, limit);
    const attempts = attemptsOf(
      this.ctx.storage.sql,
      rows.map((row) => row.seq),
      attemptsEach,
    );
    const head = ordering === "fifo" ? headOfLine(this.ctx.storage.sql) : undefined;
    return rows.map((row) => this.view(endpointId, row, attempts.get(row.seq) ?? [], head));
  }

  /** One delivery due again now, its schedule afresh; null when the lane has none for that event. */
  async retry(endpointId: string, seq: number, attemptsEach: number): Promise<DeliveryView | null> {
    const row = resetDelivery(this.ctx.storage.sql, seq, Date.now());
    if (!row) return null;
    await this.runSoon();
    return this.view(endpointId, row, attemptsOf(this.ctx.storage.sql, [seq], attemptsEach).get(seq) ?? []);
  }

  /** Failed deliveries made since `since` due again now, `limit` at most; how many, and whether more remain. */
  async recover(since: number, limit: number): Promise<{ recovered: number; more: boolean }> {
    const recovered = recoverFailed(this.ctx.storage.sql, since, Date.now(), limit);
    await this.runSoon();
    return { recovered, more: failedSince(this.ctx.storage.sql, since) };
  }

  /** What the lane holds, and its storage's size in bytes, for operators. */
  async report(): Promise<ReturnType<typeof deliveryCounts> & { bytes: number }> {
    return { ...deliveryCounts(this.ctx.storage.sql), bytes: this.ctx.storage.sql.databaseSize };
  }

  /** The endpoint was deleted: the lane and everything in it go. */
  async wipe(): Promise<void> {
    await this.ctx.storage.deleteAlarm();
    await this.ctx.storage.deleteAll();
    // This instance may still be called (a late pass), so the tables are made again, empty.
    this.ctx.storage.sql.exec(DELIVERIES_DDL + ATTEMPTS_DDL);
  }

  /**
   * Never throws, as the platform gives up on an alarm that keeps failing: a failed run is tried again with backoff,
   * its deliveries still pending here.
   */
  async alarm(): Promise<void> {
    const endpointId = this.ctx.storage.kv.get<string>("endpointId");
    if (endpointId === undefined) return;
    const storage = this.ctx.storage.kv;
    let next: number | null;
    try {
      const config = readConfig(this.env as unknown as Record<string, unknown>);
      if (!config.ok) throw new Error(`invalid configuration: ${config.problems.join("; ")}`);
      const result = await runLane({
        sql: this.ctx.storage.sql,
        kv: storage,
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
      });
      if (result === "endpoint gone") return await this.wipe();
      if (storage.get("failedRuns") !== undefined) storage.delete("failedRuns");
      next = result.next;
    } catch (error) {
      const failed = (storage.get<number>("failedRuns") ?? 0) + 1;
      storage.put("failedRuns", failed);
      next = Date.now() + failedRunRetryMs(failed);
      logLine("warn", "webhook-lane", "a lane's run failed; it is tried again", {
        endpointId,
        failedRuns: failed,
        retryAt: iso(next),
        error: String(error),
      });
    }
    if (next !== null) await this.ctx.storage.setAlarm(next);
  }

  /** Sets the alarm for the first due delivery, unless one is set sooner; none while nothing is pending. */
  private async runSoon(): Promise<void> {
    const next = nextDueAt(this.ctx.storage.sql);
    if (next === null) return;
    const at = Math.max(next, Date.now());
    const due = await this.ctx.storage.getAlarm();
    if (due === null || due > at) await this.ctx.storage.setAlarm(at);
  }

  private view(endpointId: string, row: LaneDelivery, attempts: LaneAttempt[], head?: LaneDelivery): DeliveryView {
    return {
      id: deliveryIdOf(endpointId, row.seq),
      eventId: eventIdOf(row.seq),
      attempts: row.attempts,
      lastStatus: row.last_status,
      lastError: row.last_error,
      nextAttemptAt: row.outcome === "pending" && row.due_at !== null ? iso(row.due_at) : null,
      heldBehind:
        row.outcome === "pending" && head !== undefined && behindInLine(row.seq, head.seq) ? eventIdOf(head.seq) : null,
      outcome: row.outcome,
      createdAt: iso(row.created_at),
      attemptLog: attempts.map(attemptJson),
    };
  }
}
