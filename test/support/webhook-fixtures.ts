import { env } from "cloudflare:workers";
import { expect } from "vitest";
import type { DeliveryMessage } from "../../src/webhooks/dispatch-pass";
import { apiWith } from "./request";
import { clearOrders } from "./seed";
import { storeTestKey, type TestKey } from "./test-keys";

/** A queue that records what is sent. */
export function recordingQueue() {
  const sent: DeliveryMessage[] = [];
  const queue: Pick<Queue<DeliveryMessage>, "send" | "sendBatch"> = {
    send: async (body) => {
      sent.push(body);
      return { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } } as unknown as QueueSendResponse;
    },
    sendBatch: async (messages) => {
      sent.push(...[...messages].map((message) => message.body));
      return { metadata: { metrics: { backlogCount: 0, backlogBytes: 0 } } } as unknown as QueueSendBatchResponse;
    },
  };
  return { sent, queue };
}

/** Makes an endpoint through the API, with a dispatcher binding that does nothing: these tests run the passes themselves. */
export async function makeEndpoint(key: string, body: { url: string; types?: string[] }): Promise<{ id: string; secret: string }> {
  const response = await apiWith(
    { ...env, WEBHOOK_DISPATCHER: { getByName: () => ({ wake: async () => {} }) } as unknown as Env["WEBHOOK_DISPATCHER"] },
    "/v2/webhook-endpoints",
    { method: "POST", key, headers: { "Content-Type": "application/json" }, body: JSON.stringify(body) },
  );
  expect(response.status).toBe(201);
  return response.json();
}

/** The feed's head now: a pass from there sees only what the test writes. */
export const feedHead = async () => String((await env.DB.prepare("SELECT coalesce(max(seq), 0) AS seq FROM order_events").first<number>("seq"))!);

/** A queue message as the consumer sees it, recording how it was settled. */
export function queuedMessage(deliveryId: string, attempts = 1) {
  const settled: { how: "ack" | "retry"; delaySeconds?: number }[] = [];
  const message = {
    id: `msg-${deliveryId}-${attempts}`,
    timestamp: new Date(),
    body: { deliveryId },
    attempts,
    ack: () => void settled.push({ how: "ack" }),
    retry: (options?: QueueRetryOptions) => void settled.push({ how: "retry", ...(options?.delaySeconds !== undefined && { delaySeconds: options.delaySeconds }) }),
  } satisfies Message<DeliveryMessage>;
  return { message, settled };
}

/** A batch of those messages, from the delivery queue or its dead letters. */
export const queuedBatch = (queue: string, messages: Message<DeliveryMessage>[]): MessageBatch<DeliveryMessage> => ({
  queue,
  messages,
  metadata: { metrics: { backlogCount: messages.length, backlogBytes: 0 } },
  ackAll: () => messages.forEach((message) => message.ack()),
  retryAll: (options) => messages.forEach((message) => message.retry(options)),
});

/** A clean slate for a webhook test (no orders, endpoints or deliveries), and a key that manages endpoints: the owner of what the test makes. */
export async function freshWebhookOwner(): Promise<TestKey> {
  await clearOrders();
  await env.DB.batch([env.DB.prepare("DELETE FROM webhook_deliveries"), env.DB.prepare("DELETE FROM webhook_endpoints")]);
  return storeTestKey({ scopes: ["orders:read", "orders:write", "webhooks:manage"] });
}
