/**
 * The queue consumer's work (docs/design/order-events.md#delivery): one
 * message is one delivery, posted signed (Standard Webhooks) with a 10 s
 * timeout. A 2xx is delivered; anything else is retried after the schedule's
 * next delay, and once the schedule is spent the queue dead-letters it,
 * where the failure is recorded and an endpoint that failed the whole span
 * is disabled.
 */
import { orderEventJson, type OrderEventRow } from "../events/order-event-json";
import type { D1Queryable } from "../lib/d1-session";
import type { DroppedValue } from "../orders/order-json";
import type { DeliveryMessage } from "./dispatch-events";
import { openSecret } from "./webhook-secrets";
import { webhookHeaders } from "./webhook-signature";

export const DELIVERY_TIMEOUT_MS = 10_000;

export interface DeliveryContext {
  db: D1Queryable;
  /** How the POST goes out (the global fetch in the Worker). */
  fetch: typeof fetch;
  sealingKey: string;
  retrySeconds: readonly number[];
  now(): number;
}

type DeliveryRow = OrderEventRow & {
  id: string;
  outcome: "pending" | "delivered" | "failed";
  endpoint_id: string;
  url: string;
  endpoint_status: "enabled" | "disabled";
  secret_sealed: string;
};

const loadDelivery = (db: D1Queryable, id: string) =>
  db
    .prepare(
      "SELECT d.id, d.outcome, d.endpoint_id, e.url, e.status AS endpoint_status, e.secret_sealed, " +
        "CAST(v.seq AS TEXT) AS seq, v.type, v.created_at, v.order_row, v.previous_row, v.changed " +
        "FROM webhook_deliveries d JOIN webhook_endpoints e ON e.id = d.endpoint_id LEFT JOIN order_events v ON v.seq = d.event_seq WHERE d.id = ?1",
    )
    .bind(id)
    .first<DeliveryRow>();

const settle = (db: D1Queryable, id: string, outcome: "delivered" | "failed", status: number | null, error: string | null, at: string) =>
  db
    .prepare(
      "UPDATE webhook_deliveries SET outcome = ?2, attempts = attempts + 1, last_status = ?3, last_error = ?4, next_attempt_at = NULL, updated_at = ?5 WHERE id = ?1",
    )
    .bind(id, outcome, status, error, at)
    .run();

/** One attempt: POST, then what the queue should do with the message. */
export async function deliverOne(message: Pick<Message<DeliveryMessage>, "body" | "attempts">, context: DeliveryContext): Promise<"ack" | { retryAfterSeconds: number }> {
  const now = context.now();
  const at = new Date(now).toISOString();
  const row = await loadDelivery(context.db, message.body.deliveryId);
  // The endpoint was deleted (its deliveries with it), or this one is settled: nothing to do.
  if (!row || row.outcome !== "pending") return "ack";
  if (row.endpoint_status !== "enabled") {
    await settle(context.db, row.id, "failed", null, "the endpoint is disabled", at);
    return "ack";
  }
  if (row.seq === null) {
    await settle(context.db, row.id, "failed", null, "the event is older than the events kept", at);
    return "ack";
  }
  const body = orderEventJson(row, [] as DroppedValue[]);
  const secret = await openSecret(context.sealingKey, row.endpoint_id, row.secret_sealed);
  const headers = await webhookHeaders(secret, `evt_${row.seq}`, Math.floor(now / 1000), body);
  let status: number | null = null;
  let error: string | null = null;
  try {
    const response = await context.fetch(row.url, { method: "POST", headers, body, redirect: "manual", signal: AbortSignal.timeout(DELIVERY_TIMEOUT_MS) });
    status = response.status;
    await response.body?.cancel();
  } catch (cause) {
    error = cause instanceof Error && cause.name === "TimeoutError" ? `no answer within ${DELIVERY_TIMEOUT_MS / 1000} s` : "could not connect";
  }
  if (status !== null && status >= 200 && status < 300) {
    await settle(context.db, row.id, "delivered", status, null, at);
    return "ack";
  }
  const delays = context.retrySeconds;
  const retryAfterSeconds = delays[Math.min(message.attempts, delays.length) - 1]!;
  const last = message.attempts > delays.length;
  await context.db
    .prepare("UPDATE webhook_deliveries SET attempts = attempts + 1, last_status = ?2, last_error = ?3, next_attempt_at = ?4, updated_at = ?5 WHERE id = ?1")
    .bind(row.id, status, error ?? `the receiver answered ${status}`, last ? null : new Date(now + retryAfterSeconds * 1000).toISOString(), at)
    .run();
  return { retryAfterSeconds };
}

/**
 * A delivery the queue gave up on (its dead-letter queue): failed. Its
 * endpoint is disabled when nothing was delivered to it since this delivery
 * began: it failed every attempt for the schedule's whole span.
 */
export async function recordDeadLetter(message: Pick<Message<DeliveryMessage>, "body">, context: Pick<DeliveryContext, "db" | "now" | "retrySeconds">): Promise<void> {
  const at = new Date(context.now()).toISOString();
  const id = message.body.deliveryId;
  const days = context.retrySeconds.reduce((sum, seconds) => sum + seconds, 0) / 86_400;
  await context.db.batch([
    context.db.prepare("UPDATE webhook_deliveries SET outcome = 'failed', next_attempt_at = NULL, updated_at = ?2 WHERE id = ?1 AND outcome = 'pending'").bind(id, at),
    context.db
      .prepare(
        "UPDATE webhook_endpoints SET status = 'disabled', disabled_at = ?2, disabled_reason = ?3 " +
          "WHERE id = (SELECT endpoint_id FROM webhook_deliveries WHERE id = ?1) AND status = 'enabled' AND NOT EXISTS (" +
          "SELECT 1 FROM webhook_deliveries d WHERE d.endpoint_id = webhook_endpoints.id AND d.outcome = 'delivered' " +
          "AND d.updated_at >= (SELECT created_at FROM webhook_deliveries WHERE id = ?1))",
      )
      .bind(id, at, `every delivery failed for ${days < 1 ? `${Math.round(days * 86_400)} s` : `${days.toFixed(1)} days`}`),
  ]);
}
