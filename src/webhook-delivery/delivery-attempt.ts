/**
 * One attempt of one delivery (docs/design/order-events.md#lanes): signed (Standard Webhooks), POSTed with 10 s to
 * answer, and settled by the answer: a 2xx delivers; a 410 fails it and disables the endpoint; anything else is retried
 * on the schedule until spent. An event's first try that goes through is the log's to keep; any other gets a row.
 */
import type { D1Queryable } from "../lib/d1-session";
import type { LaneAttempt } from "./lane-attempts";
import { addTried, scheduleRetry, type LaneDelivery, type Settle } from "./lane-deliveries";
import { appendSettled } from "./lane-log";
import type { LoggedDelivery } from "./lane-log";
import { EXPIRED, type LaneMessage } from "./lane-feed";
import { disableByService, type LaneEndpoint } from "./endpoint-table";
import { postToReceiver, type ReceiverAnswer } from "./receiver-answer";
import { nextDelaySeconds, retryAfterSeconds } from "./retry-schedule";
import { webhookHeaders, type Signer } from "./webhook-signature";

const GONE = "the receiver answered 410 Gone";

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

/** An event tried for the first time, as read from the feed: it has no row unless this try fails. */
export interface FirstTry {
  seq: number;
  createdAt: number;
}

/**
 * An attempt's outcome, with what the run flushes: a first try delivered, its log entry; a row settled, its settle.
 * A row whose event is gone settles as expired.
 */
export type Attempted =
  | { outcome: AttemptOutcome; logged?: LoggedDelivery; settle?: Settle }
  | { expired: Settle | null };

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

/** Makes one attempt, or finds its event pruned (null message); a dependency's failure throws. */
export async function attemptDelivery(
  context: AttemptContext,
  endpoint: LaneEndpoint,
  signers: () => Promise<readonly Signer[]>,
  delivery: LaneDelivery | FirstTry,
  message: LaneMessage | null,
): Promise<Attempted> {
  const { sql } = context;
  const startedAt = context.now();
  if (message === null) {
    const row = "outcome" in delivery ? delivery : undefined;
    return { expired: row ? { seq: row.seq, outcome: "failed", error: EXPIRED, updatedAt: row.updated_at } : null };
  }
  const { body } = message;
  const headers = await webhookHeaders(await signers(), message.id, Math.floor(startedAt / 1000), body);
  const posted = await postToReceiver(
    context.fetch,
    endpoint.url,
    { headers, body },
    context.timeoutMs ?? DELIVERY_TIMEOUT_MS,
  );
  const now = context.now();
  const firstTry = !("outcome" in delivery);
  const outcome = outcomeOf(posted, firstTry ? 0 : delivery.schedule_step, context.retrySeconds, now);
  const at = new Date(now).toISOString();
  const attempt: LaneAttempt = [startedAt, posted.status, posted.durationMs, posted.response, posted.error];
  if (firstTry) {
    if (outcome.kind === "delivered")
      return { outcome, logged: [delivery.seq, startedAt, outcome.status, posted.durationMs, posted.response] };
    if (outcome.kind === "retry") addTried(sql, delivery.seq, attempt, outcome.dueAt, delivery.createdAt, now);
    else
      appendSettled(sql, [
        {
          seq: delivery.seq,
          outcome: "failed",
          attempts: 1,
          lastStatus: posted.status,
          lastError: outcome.kind === "gone" ? GONE : outcome.error,
          createdAt: delivery.createdAt,
          settledAt: now,
          attemptLog: [attempt],
        },
      ]);
    if (outcome.kind === "gone") await disableByService(context.db, endpoint.id, GONE, at);
    return { outcome };
  }
  const settle = (kind: Settle["outcome"], error: string | null): Settle => ({
    seq: delivery.seq,
    outcome: kind,
    attempt,
    error,
    updatedAt: delivery.updated_at,
  });
  switch (outcome.kind) {
    case "delivered":
      return { outcome, settle: settle("delivered", null) };
    case "gone":
      await disableByService(context.db, endpoint.id, GONE, at);
      return { outcome, settle: settle("failed", GONE) };
    case "retry":
      scheduleRetry(sql, delivery, attempt, outcome.dueAt, now);
      break;
    case "spent":
      return { outcome, settle: settle("failed", outcome.error) };
  }
  return { outcome };
}
