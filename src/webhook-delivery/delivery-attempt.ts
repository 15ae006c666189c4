/**
 * One attempt of one delivery (docs/design/order-events.md#lanes): signed (Standard Webhooks), POSTed with 10 s to
 * answer, logged, and settled by the answer: a 2xx delivers; a 410 fails it and disables the endpoint; anything else is
 * retried on the schedule until spent.
 */
import type { D1Queryable } from "../lib/d1-session";
import { recordAttempt } from "./lane-attempts";
import { scheduleRetry, settleDelivery, type LaneDelivery } from "./lane-deliveries";
import { disableByService, type LaneEndpoint } from "./endpoint-table";
import { postToReceiver, type ReceiverAnswer } from "./receiver-answer";
import { nextDelaySeconds, retryAfterSeconds } from "./retry-schedule";
import { webhookHeaders } from "./webhook-signature";

/** How long a receiver has to answer. In a lane of its own, a slow one delays nobody else. */
export const DELIVERY_TIMEOUT_MS = 10_000;

/** What a receiver's answer does to the delivery. */
export type AttemptOutcome =
  | { kind: "delivered"; status: number }
  | { kind: "gone" }
  | { kind: "retry"; dueAt: number; status: number | null; error: string }
  | { kind: "spent"; status: number | null; error: string };

/** The outcome of an attempt made at `now` of a delivery at `step` of the schedule. */
export function outcomeOf(
  posted: Pick<ReceiverAnswer, "status" | "error" | "retryAfter">,
  step: number,
  schedule: readonly number[],
  now: number,
): AttemptOutcome {
  const { status } = posted;
  if (status !== null && status >= 200 && status < 300) return { kind: "delivered", status };
  // Standard Webhooks: 410 Gone is the receiver saying it wants no more.
  if (status === 410) return { kind: "gone" };
  const error = posted.error ?? `the receiver answered ${status}`;
  const next = step + 1;
  if (next > schedule.length) return { kind: "spent", status, error };
  return {
    kind: "retry",
    dueAt: now + nextDelaySeconds(schedule, next, status, retryAfterSeconds(posted.retryAfter, now)) * 1000,
    status,
    error,
  };
}

/** What a delivery POSTs: an order event's or a notice's JSON, and its id (the webhook-id). */
export interface LaneMessage {
  id: string;
  body: string;
}

export interface AttemptContext {
  sql: SqlStorage;
  db: D1Queryable;
  /** How the POST goes out (the global fetch in the Worker). */
  fetch: typeof fetch;
  now(): number;
  retrySeconds: readonly number[];
  /** How long a receiver has to answer; DELIVERY_TIMEOUT_MS unless a test says otherwise. */
  timeoutMs?: number;
}

/** Makes one attempt, or settles a delivery whose event was pruned (null); a dependency's failure throws. */
export async function attemptDelivery(
  context: AttemptContext,
  endpoint: LaneEndpoint,
  secrets: readonly string[],
  delivery: LaneDelivery,
  message: LaneMessage | null,
): Promise<AttemptOutcome | "expired"> {
  const { sql } = context;
  const startedAt = context.now();
  if (message === null) {
    settleDelivery(
      sql,
      delivery.seq,
      "failed",
      { status: null, error: "the event is older than the events kept", counts: false },
      startedAt,
    );
    return "expired";
  }
  const { body } = message;
  const headers = await webhookHeaders(secrets, message.id, Math.floor(startedAt / 1000), body);
  const posted = await postToReceiver(
    context.fetch,
    endpoint.url,
    { headers, body },
    context.timeoutMs ?? DELIVERY_TIMEOUT_MS,
  );
  const now = context.now();
  // The owner's log of this attempt, before its outcome.
  recordAttempt(sql, {
    seq: delivery.seq,
    at: startedAt,
    status: posted.status,
    duration_ms: posted.durationMs,
    response: posted.response,
    error: posted.error,
  });
  const outcome = outcomeOf(posted, delivery.schedule_step, context.retrySeconds, now);
  const at = new Date(now).toISOString();
  switch (outcome.kind) {
    case "delivered":
      settleDelivery(sql, delivery.seq, "delivered", { status: outcome.status, error: null, counts: true }, now);
      break;
    case "gone": {
      const reason = "the receiver answered 410 Gone";
      // A delivery settled meanwhile (delivered by a manual retry) stays as it is: only a pending one fails.
      settleDelivery(sql, delivery.seq, "failed", { status: 410, error: reason, counts: true }, now);
      await disableByService(context.db, endpoint.id, reason, at);
      break;
    }
    case "retry":
      scheduleRetry(sql, delivery, outcome, outcome.dueAt, now);
      break;
    case "spent":
      settleDelivery(sql, delivery.seq, "failed", { status: outcome.status, error: outcome.error, counts: true }, now);
      break;
  }
  return outcome;
}
