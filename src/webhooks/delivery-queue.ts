import { configOf } from "../middleware/load-config";
import type { ConfigResult } from "../read-config";
import type { DeliveryMessage } from "./dispatch-events";
import { deliverOne, recordDeadLetter } from "./deliver-webhooks";
import { sealingKeyOf } from "./webhook-secrets";

/** The dead-letter queue's name is the delivery queue's and this (wrangler.toml). */
export const DEAD_LETTER_SUFFIX = "-dlq";

/**
 * The Worker's queue handler (docs/design/order-events.md#delivery): a batch
 * of the delivery queue is attempted message by message, each acked or
 * retried after the schedule's delay; a batch of its dead-letter queue is
 * recorded as failed. A message whose handling throws is retried by the
 * queue as it is.
 */
export async function deliverBatch(batch: MessageBatch<DeliveryMessage>, env: Env, configs: WeakMap<Env, ConfigResult>): Promise<void> {
  const config = configOf(env, configs);
  if (!config.ok) throw new Error(`invalid configuration: ${config.problems.join("; ")}`);
  const context = { db: env.DB, fetch: (input: RequestInfo | URL, init?: RequestInit) => fetch(input, init), sealingKey: sealingKeyOf(env), retrySeconds: config.config.webhookRetrySeconds, now: Date.now };
  const deadLetters = batch.queue.endsWith(DEAD_LETTER_SUFFIX);
  await Promise.all(
    batch.messages.map(async (message) => {
      if (deadLetters) {
        await recordDeadLetter(message, context);
        message.ack();
        return;
      }
      const next = await deliverOne(message, context);
      if (next === "ack") message.ack();
      else message.retry({ delaySeconds: next.retryAfterSeconds });
    }),
  );
}
