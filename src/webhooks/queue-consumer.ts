import { budgetLiveness, type BudgetLiveness } from "../keys/live-budget";
import { logLine } from "../lib/log";
import type { TtlCache } from "../lib/ttl-cache";
import { configOf } from "../framework/middleware/load-config";
import type { ConfigResult } from "../framework/read-config";
import type { DeliveryMessage } from "./dispatch-pass";
import { deliverOne, handleDeadLetter, type DeliveryContext, type Settlement } from "./delivery-attempt";
import { sealingKeyOf } from "./webhook-secrets";

/** The dead-letter queue's name is the delivery queue's and this; the slow lane's, this (wrangler.toml). */
export const DEAD_LETTER_SUFFIX = "-dlq";
export const SLOW_LANE_SUFFIX = "-slow";

/**
 * The wait before a message is tried again after this service's own
 * dependencies failed it (D1, KV: not the receiver), by the queue's attempt:
 * 1, 2, 4 … 30 s. Apart from the receiver's schedule, so a database outage
 * neither spends nor stretches it (docs/design/order-events.md#faults).
 */
export const infrastructureRetrySeconds = (attempts: number) => Math.min(30, 2 ** Math.max(0, attempts - 1));

export type ConsumerContext = DeliveryContext & {
  /** Sends a message back to the delivery queue (the dead letters that a dependency's failure put there). */
  resend(message: DeliveryMessage, delaySeconds: number): Promise<void>;
  /** Sends a message to the slow lane's queue (a receiver too slow for the fast lane). */
  toSlowLane(message: DeliveryMessage): Promise<void>;
};

/**
 * A batch of the delivery queue (the fast lane), of the slow lane's, or of
 * their dead-letter queue. Each message settles on its own, as soon as it is
 * done: a receiver that hangs never holds its batch-mates' outcomes (nor, in
 * the fast lane, the next batch for more than FAST_LANE_TIMEOUT_MS), and a
 * message whose handling throws (a dependency down) is retried after a delay
 * of its own while the others are acked, so none is posted twice because
 * another failed.
 */
export async function consumeDeliveries(batch: MessageBatch<DeliveryMessage>, context: ConsumerContext): Promise<void> {
  const deadLetters = batch.queue.endsWith(DEAD_LETTER_SUFFIX);
  const lane = { ...context, fastLane: !batch.queue.endsWith(SLOW_LANE_SUFFIX) };
  await Promise.allSettled(
    batch.messages.map(async (message) => {
      let settlement: Settlement;
      try {
        settlement = deadLetters ? await handleDeadLetter(message, context) : await deliverOne(message, lane);
        if (settlement === "slow") await context.toSlowLane(message.body);
      } catch (error) {
        const delaySeconds = infrastructureRetrySeconds(message.attempts);
        logLine("warn", message.id, "a webhook delivery could not be handled; it is tried again", { deliveryId: message.body.deliveryId, queue: batch.queue, delaySeconds, error: String(error) });
        message.retry({ delaySeconds });
        return;
      }
      if (settlement === "ack" || settlement === "slow") message.ack();
      else message.retry({ delaySeconds: settlement.retryAfterSeconds });
    }),
  );
}

/** The Worker's queue handler (docs/design/order-events.md#delivery): the platform's bindings made into the consumer's context. */
export async function deliverBatch(batch: MessageBatch<DeliveryMessage>, env: Env, memory: { configs: WeakMap<Env, ConfigResult>; liveBudgets: TtlCache<string, BudgetLiveness> }): Promise<void> {
  const config = configOf(env, memory.configs);
  if (!config.ok) throw new Error(`invalid configuration: ${config.problems.join("; ")}`);
  await consumeDeliveries(batch, {
    db: env.DB,
    fetch: (input: RequestInfo | URL, init?: RequestInit) => fetch(input, init),
    sealingKey: sealingKeyOf(env),
    retrySeconds: config.config.webhookRetrySeconds,
    now: Date.now,
    budgetLiveness: (budget) => budgetLiveness(env.API_KEYS, budget, memory.liveBudgets),
    resend: async (message, delaySeconds) => {
      await env.WEBHOOK_DELIVERIES.send(message, { contentType: "json", delaySeconds });
    },
    toSlowLane: async (message) => {
      await env.WEBHOOK_SLOW_DELIVERIES.send(message, { contentType: "json" });
    },
  });
}
