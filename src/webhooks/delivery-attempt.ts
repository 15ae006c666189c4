/**
 * The queue consumer's work (docs/design/order-events.md#delivery): one
 * message is one delivery, posted signed (Standard Webhooks) with a 2 s
 * timeout in the fast lane and 10 s in the slow lane. A 2xx is delivered; anything else is retried after the schedule's
 * next delay. The schedule is counted in the delivery's row (schedule_step),
 * not by the queue, whose attempts also count this service's own failures
 * (docs/design/order-events.md#faults); once it is spent the delivery is
 * failed, and an endpoint that failed the whole span is disabled.
 */
import { orderEventJson, type OrderEventRow } from "../events/order-event-json";
import type { D1Queryable } from "../lib/d1-session";
import type { DroppedValue } from "../orders/order-json";
import type { DeliveryMessage } from "./dispatch-pass";
import type { BudgetLiveness } from "../keys/live-budget";
import { postToReceiver } from "./receiver-answer";
import { liveSecrets } from "./webhook-secrets";
import { webhookHeaders } from "./webhook-signature";

export const DELIVERY_TIMEOUT_MS = 10_000;

/**
 * How long a receiver gets in the fast lane (the delivery queue). A queue
 * hands over its next batch only once this one is done, so a receiver that
 * took its full 10 s there would hold back every endpoint's next deliveries:
 * one that does not answer in 2 s has the delivery moved to the slow lane
 * (its own queue), which gives it the full DELIVERY_TIMEOUT_MS
 * (docs/design/order-events.md#faults).
 */
export const FAST_LANE_TIMEOUT_MS = 2_000;
/** How long an endpoint whose receiver was too slow for the fast lane has its deliveries go straight to the slow lane. */
export const SLOW_LANE_MS = 10 * 60_000;

/** How soon a delivery whose budget shows no key at all is tried again: KV's list catches up within a minute. */
const UNKNOWN_BUDGET_RETRY_SECONDS = 30;

/** A message arriving this long before its delivery's next attempt is a stale copy (queue delays are never early by more). */
const STALE_AFTER_MS = 5_000;

/**
 * The longest delay Cloudflare Queues puts on a message (12 hours). A longer
 * wait is kept in the row alone: the message is acked, and the sweeper
 * (resend-overdue-deliveries.ts) sends it again once it is due.
 */
export const MAX_QUEUE_DELAY_SECONDS = 43_200;

export interface DeliveryContext {
  db: D1Queryable;
  /** How the POST goes out (the global fetch in the Worker). */
  fetch: typeof fetch;
  sealingKey: string;
  retrySeconds: readonly number[];
  now(): number;
  /** Whether a budget has a key that is neither revoked nor expired (nothing is delivered for one that has none), or no key is seen yet. */
  budgetLiveness(budget: string): Promise<BudgetLiveness>;
  /** The delivery queue's consumer: a receiver gets FAST_LANE_TIMEOUT_MS, then the delivery moves to the slow lane. */
  fastLane?: boolean;
}

/** What the queue should do with the message: drop it, move it to the slow lane, or bring it back after a delay. */
export type Settlement = "ack" | "slow" | { retryAfterSeconds: number };

type DeliveryRow = OrderEventRow & {
  id: string;
  outcome: "pending" | "delivered" | "failed";
  schedule_step: number;
  next_attempt_at: string | null;
  endpoint_id: string;
  budget: string;
  url: string;
  endpoint_status: "enabled" | "disabled";
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_until: string | null;
  slow_until: string | null;
};

const loadDelivery = (db: D1Queryable, id: string) =>
  db
    .prepare(
      "SELECT d.id, d.outcome, d.schedule_step, d.next_attempt_at, d.endpoint_id, e.budget, e.url, e.status AS endpoint_status, e.secret_sealed, " +
        "e.previous_secret_sealed, e.previous_secret_until, e.slow_until, " +
        "CAST(v.seq AS TEXT) AS seq, v.type, v.created_at, v.order_row, v.previous_row, v.changed " +
        "FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id LEFT JOIN order_events v ON v.seq = d.event_seq WHERE d.id = ?1",
    )
    .bind(id)
    .first<DeliveryRow>();

// A second message of a delivery (at least once) may settle it late: never a delivered one failed.
const settle = (db: D1Queryable, id: string, outcome: "delivered" | "failed", attempt: { status: number | null; error: string | null; counts: boolean }, at: string) =>
  db
    .prepare(
      "UPDATE webhook_deliveries SET outcome = ?2, attempts = attempts + ?6, last_status = coalesce(?3, last_status), last_error = ?4, next_attempt_at = NULL, updated_at = ?5 " +
        "WHERE id = ?1 AND (outcome = 'pending' OR ?2 = 'delivered')",
    )
    .bind(id, outcome, attempt.status, attempt.error, at, attempt.counts ? 1 : 0)
    .run();

/** Seconds a `Retry-After` asks for (delta-seconds or an HTTP-date), or null when it asks for nothing readable. */
export function retryAfterSeconds(value: string | null, now: number): number | null {
  if (value === null) return null;
  if (/^\s*\d+\s*$/.test(value)) return Number(value);
  const at = Date.parse(value);
  return Number.isNaN(at) ? null : Math.max(0, Math.ceil((at - now) / 1000));
}

/**
 * The wait before the next attempt after a failed one: the schedule's, or
 * longer when a 429 or 503 asked for longer with `Retry-After`, but never
 * past the schedule's whole span (a receiver cannot park its deliveries for ever).
 */
export function nextDelaySeconds(schedule: readonly number[], step: number, status: number | null, retryAfter: number | null): number {
  const scheduled = schedule[Math.min(step, schedule.length) - 1]!;
  if ((status !== 429 && status !== 503) || retryAfter === null) return scheduled;
  const span = schedule.reduce((sum, seconds) => sum + seconds, 0);
  return Math.max(scheduled, Math.min(retryAfter, span));
}

const queueDelay = (seconds: number) => Math.min(MAX_QUEUE_DELAY_SECONDS, Math.max(0, Math.ceil(seconds)));

/** One attempt as its endpoint's owner sees it in the deliveries list (migrations/0017_webhook_attempts.sql). */
interface AttemptRecord {
  deliveryId: string;
  endpointId: string;
  at: string;
  status: number | null;
  durationMs: number;
  answer: string | null;
  error: string | null;
}

const recordAttempt = (db: D1Queryable, attempt: AttemptRecord) =>
  db
    .prepare("INSERT INTO webhook_attempts (delivery_id, endpoint_id, at, status, duration_ms, response, error) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)")
    .bind(attempt.deliveryId, attempt.endpointId, attempt.at, attempt.status, attempt.durationMs, attempt.answer, attempt.error);

/** One attempt: POST, then what the queue should do with the message. A dependency's failure throws: the caller retries the message. */
export async function deliverOne(message: Pick<Message<DeliveryMessage>, "body" | "attempts">, context: DeliveryContext): Promise<Settlement> {
  const now = context.now();
  const at = new Date(now).toISOString();
  const row = await loadDelivery(context.db, message.body.deliveryId);
  // The endpoint was deleted (its deliveries with it), or this one is settled: nothing to do.
  if (!row || row.outcome !== "pending") return "ack";
  const none = { status: null, error: null, counts: false };
  if (row.endpoint_status !== "enabled") {
    await settle(context.db, row.id, "failed", { ...none, error: "the endpoint is disabled" }, at);
    return "ack";
  }
  if (row.seq === null) {
    await settle(context.db, row.id, "failed", { ...none, error: "the event is older than the events kept" }, at);
    return "ack";
  }
  // The schedule was spent by an earlier message of this delivery; this one outlived it.
  if (row.schedule_step > context.retrySeconds.length) {
    await recordDeadLetter(message, context);
    return "ack";
  }
  // A second message of this delivery (the sweeper's, a dead letter sent back) after another one failed and set the next
  // attempt later: that one's message comes then; this one would spend the schedule twice.
  if (row.next_attempt_at !== null && Date.parse(row.next_attempt_at) - now > STALE_AFTER_MS) return "ack";
  if (context.fastLane && row.slow_until !== null && Date.parse(row.slow_until) > now) return "slow";
  const liveness = await context.budgetLiveness(row.budget);
  // No key of the budget seen at all: a key so new that KV's list does not show it yet, not a revoked one. Asked again later.
  if (liveness === "unknown") return { retryAfterSeconds: UNKNOWN_BUDGET_RETRY_SECONDS };
  if (liveness === "dead") {
    await settle(context.db, row.id, "failed", { ...none, error: "the endpoint's budget has no live key (revoked or expired)" }, at);
    return "ack";
  }

  const body = orderEventJson(row, [] as DroppedValue[]);
  const secrets = await liveSecrets(context.sealingKey, { ...row, id: row.endpoint_id }, now);
  // Not a passing fault: it would fail every time (docs/operations.md#webhooks: a changed WEBHOOK_SECRETS_KEY leaves secrets unreadable).
  if (secrets === undefined) {
    await settle(context.db, row.id, "failed", { ...none, error: "the endpoint's secret cannot be opened (WEBHOOK_SECRETS_KEY changed?)" }, at);
    return "ack";
  }
  const headers = await webhookHeaders(secrets, `evt_${row.seq}`, Math.floor(now / 1000), body);
  const posted = await postToReceiver(context.fetch, row.url, { headers, body }, context.fastLane ? FAST_LANE_TIMEOUT_MS : DELIVERY_TIMEOUT_MS);
  const attempt = { deliveryId: row.id, endpointId: row.endpoint_id, at, status: posted.status, durationMs: posted.durationMs, answer: posted.response, error: posted.error };
  // Not an attempt against the schedule: the receiver gets its full 10 s in the slow lane (and may see this POST twice).
  if (posted.timedOut && context.fastLane) {
    const moved = { ...attempt, error: `no answer within ${FAST_LANE_TIMEOUT_MS / 1000} s: sent again with ${DELIVERY_TIMEOUT_MS / 1000} s to answer` };
    await context.db.batch([
      recordAttempt(context.db, moved),
      context.db.prepare("UPDATE webhook_endpoints SET slow_until = ?2 WHERE id = ?1").bind(row.endpoint_id, new Date(now + SLOW_LANE_MS).toISOString()),
    ]);
    return "slow";
  }
  // The owner's log of this attempt, before its outcome: a failure to write either retries the message (at least once).
  await recordAttempt(context.db, attempt).run();
  const { status, error } = posted;
  const retryAfter = retryAfterSeconds(posted.retryAfter, now);
  if (status !== null && status >= 200 && status < 300) {
    await settle(context.db, row.id, "delivered", { status, error: null, counts: true }, at);
    return "ack";
  }
  // Standard Webhooks: 410 Gone is the receiver saying it wants no more.
  if (status === 410) {
    const reason = "the receiver answered 410 Gone";
    await context.db.batch([
      context.db
        .prepare("UPDATE webhook_deliveries SET outcome = 'failed', attempts = attempts + 1, last_status = 410, last_error = ?2, next_attempt_at = NULL, updated_at = ?3 WHERE id = ?1")
        .bind(row.id, reason, at),
      context.db.prepare("UPDATE webhook_endpoints SET status = 'disabled', disabled_at = ?2, disabled_reason = ?3, disabled_by = 'service' WHERE id = ?1 AND status = 'enabled'").bind(row.endpoint_id, at, reason),
    ]);
    return "ack";
  }
  const step = row.schedule_step + 1;
  const last = step > context.retrySeconds.length;
  const delay = nextDelaySeconds(context.retrySeconds, step, status, retryAfter);
  const { meta } = await context.db
    .prepare(
      "UPDATE webhook_deliveries SET attempts = attempts + 1, schedule_step = ?2, last_status = ?3, last_error = ?4, next_attempt_at = ?5, updated_at = ?6 " +
        "WHERE id = ?1 AND outcome = 'pending' AND schedule_step = ?7",
    )
    .bind(row.id, step, status, error ?? `the receiver answered ${status}`, last ? null : new Date(now + delay * 1000).toISOString(), at, row.schedule_step)
    .run();
  // Another message of this delivery moved it on meanwhile (or settled it): that one carries it; this one would count a step twice.
  if (meta.changes === 0) return "ack";
  // After the last step the queue dead-letters the message (its max_retries is the schedule's length), or, for a
  // message sent again mid-schedule, brings it back once more: either way recordDeadLetter() settles it.
  if (!last && delay > MAX_QUEUE_DELAY_SECONDS) return "ack";
  return { retryAfterSeconds: queueDelay(delay) };
}

/**
 * A delivery whose schedule is spent: failed. Its endpoint is disabled when
 * nothing was delivered to it since this delivery began: it failed every
 * attempt for the schedule's whole span.
 */
export async function recordDeadLetter(message: Pick<Message<DeliveryMessage>, "body">, context: Pick<DeliveryContext, "db" | "now" | "retrySeconds">): Promise<void> {
  const at = new Date(context.now()).toISOString();
  const id = message.body.deliveryId;
  const days = context.retrySeconds.reduce((sum, seconds) => sum + seconds, 0) / 86_400;
  await context.db.batch([
    context.db.prepare("UPDATE webhook_deliveries SET outcome = 'failed', next_attempt_at = NULL, updated_at = ?2 WHERE id = ?1 AND outcome = 'pending'").bind(id, at),
    context.db
      .prepare(
        "UPDATE webhook_endpoints SET status = 'disabled', disabled_at = ?2, disabled_reason = ?3, disabled_by = 'service' " +
          "WHERE id = (SELECT endpoint_id FROM webhook_deliveries WHERE id = ?1) AND status = 'enabled' AND NOT EXISTS (" +
          "SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = webhook_endpoints.id AND d.outcome = 'delivered' " +
          "AND d.updated_at >= (SELECT created_at FROM webhook_deliveries WHERE id = ?1))",
      )
      .bind(id, at, `every delivery failed for ${days < 1 ? `${Math.round(days * 86_400)} s` : `${days.toFixed(1)} days`}`),
  ]);
}

/**
 * A message of the dead-letter queue. The queue's attempts ran out, which
 * happens at the end of the schedule, and also when this service's own
 * dependencies failed it that many times (a D1 outage): only the first is a
 * failed delivery. The second goes back to the delivery queue, due when its
 * row says.
 */
export async function handleDeadLetter(
  message: Pick<Message<DeliveryMessage>, "body">,
  context: Pick<DeliveryContext, "db" | "now" | "retrySeconds"> & { resend(message: DeliveryMessage, delaySeconds: number): Promise<void> },
): Promise<"ack"> {
  const row = await context.db
    .prepare("SELECT outcome, schedule_step, next_attempt_at FROM webhook_deliveries WHERE id = ?1")
    .bind(message.body.deliveryId)
    .first<{ outcome: string; schedule_step: number; next_attempt_at: string | null }>();
  if (!row || row.outcome !== "pending") return "ack";
  if (row.schedule_step > context.retrySeconds.length) await recordDeadLetter(message, context);
  else await context.resend(message.body, queueDelay(((row.next_attempt_at === null ? 0 : Date.parse(row.next_attempt_at)) - context.now()) / 1000));
  return "ack";
}
