/**
 * One run of an endpoint's lane (docs/design/order-events.md#lanes): its due deliveries attempted, LANE_CONCURRENCY at
 * once (fifo: one at a time, in order) and paced by its rateLimit, for at most LANE_RUN_MS; then its health watched.
 * Everything a run needs is handed in, so tests bring their own receiver and clock.
 */
import { orderEventJson, type OrderEventRow } from "../events/order-event-json";
import type { DroppedValue } from "../orders/order-json";
import type { AccountLiveness } from "../keys/live-account";
import type { D1Queryable } from "../lib/d1-session";
import { attemptDelivery, type AttemptContext, type LaneMessage } from "./delivery-attempt";
import { noticeBodies, noticeIdOf } from "./endpoint-notices";
import { OWED_NOTICE_RETRY_MS, watchEndpoint, type WatchContext } from "./endpoint-watch";
import { pruneAttempts } from "./lane-attempts";
import {
  deliveryOf,
  dueDeliveries,
  dueInOrder,
  failPending,
  headOfLine,
  nextDueAt,
  pruneSettled,
  type LaneDelivery,
} from "./lane-deliveries";
import { laneEndpoint, type LaneEndpoint } from "./endpoint-table";
import { nextStartAfter, waitBeforeStart } from "./lane-pacing";
import { DELIVERY_LOG_MS } from "./lane-retention";
import { liveSecrets } from "./webhook-secrets";

/** How long one run starts deliveries; those in flight then are finished before it ends. */
export const LANE_RUN_MS = 20_000;
/** Deliveries one run starts at most: bounds its D1 reads (one per page) and its CPU. */
export const LANE_RUN_DELIVERIES = 600;
/** Deliveries read (and their events fetched from D1 in one query) at a time. */
const PAGE = 50;
/** Rows failed, or pruned, per statement and run: a lane with a million left takes several runs, each short. */
export const LANE_BATCH = 1_000;

export interface LaneContext extends AttemptContext, WatchContext {
  endpointId: string;
  sealingKey: string;
  /** Whether the endpoint's account has a key neither revoked nor expired, or no key is seen yet. */
  accountLiveness(budget: string): Promise<AccountLiveness>;
  /** Waits that long (a timer in the Worker; tests hand in their own). */
  sleep(ms: number): Promise<void>;
}

/**
 * What a run leaves: when the next is due (null: nothing pending), with `attempted` (taken up) and `sent` (POSTed); or
 * that the endpoint is gone.
 */
export type LaneRunResult =
  | { next: number | null; delivered: number; attempted: number; sent: number }
  | "endpoint gone";

/**
 * What each delivery sends, by its key: an order event's (its sequence) or a notice's (its negated id); absent once
 * pruned.
 */
async function messagesOf(db: D1Queryable, seqs: readonly number[]): Promise<Map<number, LaneMessage>> {
  const events = seqs.filter((seq) => seq > 0);
  const notices = seqs.filter((seq) => seq < 0).map((seq) => -seq);
  const messages = new Map<number, LaneMessage>();
  if (events.length > 0) {
    const { results } = await db
      .prepare(
        "SELECT CAST(seq AS TEXT) AS seq, type, created_at, order_row, previous_row, changed FROM order_events WHERE " +
          "seq IN (SELECT value FROM json_each(?1))",
      )
      .bind(JSON.stringify(events))
      .all<OrderEventRow>();
    for (const row of results)
      messages.set(Number(row.seq), { id: `evt_${row.seq}`, body: orderEventJson(row, [] as DroppedValue[]) });
  }
  for (const [id, body] of await noticeBodies(db, notices)) messages.set(-id, { id: noticeIdOf(id), body });
  return messages;
}

/** Settles what cannot be sent at all: every pending delivery fails with the reason, a batch a run. */
function failAll(context: LaneContext, reason: string): LaneRunResult {
  failPending(context.sql, reason, context.now(), LANE_BATCH);
  const next = nextDueAt(context.sql);
  return { next: next === null ? null : context.now(), delivered: 0, attempted: 0, sent: 0 };
}

export async function runLane(context: LaneContext): Promise<LaneRunResult> {
  const { sql } = context;
  const began = context.now();
  pruneSettled(sql, began - DELIVERY_LOG_MS, LANE_BATCH);
  pruneAttempts(sql, began - DELIVERY_LOG_MS, LANE_BATCH);
  const result =
    nextDueAt(sql) === null ? { next: null, delivered: 0, attempted: 0, sent: 0 } : await sendDue(context, began);
  if (result === "endpoint gone") return result;
  const { owesNotice } = await watchEndpoint(context, result);
  if (!owesNotice) return result;
  const retry = context.now() + OWED_NOTICE_RETRY_MS;
  return { ...result, next: result.next === null ? retry : Math.min(result.next, retry) };
}

/** The endpoint as it is now and its signing secrets, or what the run ends with when nothing can be sent. */
async function sendable(
  context: LaneContext,
): Promise<{ endpoint: LaneEndpoint; secrets: readonly string[] } | LaneRunResult> {
  const now = context.now();
  const endpoint = await laneEndpoint(context.db, context.endpointId);
  if (!endpoint) return "endpoint gone";
  if (endpoint.status !== "enabled") {
    // Its owner reads why in the delivery log: a leak's disabling names the key (docs/api.md#what-a-leak-ends).
    const leak =
      endpoint.disabled_for_leak === null
        ? ""
        : `: the key ${endpoint.disabled_for_leak}, which made or aimed it, was revoked as leaked`;
    return failAll(context, `the endpoint is disabled${leak}`);
  }
  const liveness = await context.accountLiveness(endpoint.budget);
  if (liveness === "dead")
    return failAll(
      context,
      "the endpoint's account has no live key with orders:read (revoked, expired, or without that scope)",
    );
  const secrets = await liveSecrets(context.sealingKey, endpoint, now);
  // Not a passing fault: a changed WEBHOOK_SECRETS_KEY would fail every time (docs/operations.md#webhooks).
  if (secrets === undefined)
    return failAll(context, "the endpoint's secret cannot be opened (WEBHOOK_SECRETS_KEY changed?)");
  return { endpoint, secrets };
}

/**
 * The pool: due deliveries started in turn, LANE_CONCURRENCY at once, paced. The endpoint is read with each page and
 * each row just before its start, so a disabling, a new URL or secret, or a settled row holds at once. A run ends only
 * once every POST it started is recorded, so none is sent twice.
 */
async function sendDue(context: LaneContext, began: number): Promise<LaneRunResult> {
  const { sql } = context;
  const inFlight = new Map<number, Promise<void>>();
  let page: { delivery: LaneDelivery; message: LaneMessage | null }[] = [];
  let current: { endpoint: LaneEndpoint; secrets: readonly string[] } | undefined;
  let verdict: LaneRunResult | undefined;
  let nextStartAt = began;
  let attempted = 0;
  let sent = 0;
  let delivered = 0;
  let stopped = false;
  let failure: unknown;

  const nextDelivery = async () => {
    for (;;) {
      if (page.length === 0) {
        let due = dueDeliveries(sql, context.now(), PAGE, [...inFlight.keys()]);
        if (due.length === 0) return undefined;
        const ready = await sendable(context);
        if (ready === "endpoint gone" || !("endpoint" in ready)) {
          verdict = ready;
          return undefined;
        }
        current = ready;
        // A fifo endpoint takes the oldest pending first, and nothing behind it until it is settled.
        if (ready.endpoint.ordering === "fifo") {
          due = dueInOrder(sql, context.now(), PAGE, [...inFlight.keys()]);
          if (due.length === 0) return undefined;
        }
        const messages = await messagesOf(
          context.db,
          due.map((delivery) => delivery.seq),
        );
        page = due.map((delivery) => ({ delivery, message: messages.get(delivery.seq) ?? null }));
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
        if (current?.endpoint.ordering === "fifo" && headOfLine(sql)?.seq !== fresh.seq) return undefined;
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
      const wait = waitBeforeStart(
        context.now(),
        nextStartAt,
        inFlight.size,
        current?.endpoint.ordering === "fifo" ? 1 : undefined,
      );
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
      const { endpoint, secrets } = current;
      attempted += 1;
      nextStartAt = nextStartAfter(context.now(), endpoint.rate_limit);
      const { seq } = next.delivery;
      inFlight.set(
        seq,
        attemptDelivery(context, endpoint, secrets, next.delivery, next.message)
          .then((outcome) => {
            if (outcome !== "expired") sent += 1;
            if (outcome !== "expired" && outcome.kind === "delivered") delivered += 1;
            if (outcome !== "expired" && outcome.kind === "gone") stopped = true;
          })
          .catch((error: unknown) => {
            failure ??= error;
          })
          .finally(() => inFlight.delete(seq)),
      );
    }
  } finally {
    await Promise.allSettled(inFlight.values());
  }
  if (failure !== undefined) throw failure;
  if (verdict !== undefined && (verdict === "endpoint gone" || attempted === 0)) return verdict;
  const due = current?.endpoint.ordering === "fifo" ? (headOfLine(sql)?.due_at ?? null) : nextDueAt(sql);
  return { next: due === null ? null : Math.max(due, context.now()), delivered, attempted, sent };
}
