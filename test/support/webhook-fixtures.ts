import { env } from "cloudflare:workers";
import { beforeEach, expect } from "vitest";
import type { DeliveryMessage } from "../../src/webhooks/dispatch-pass";
import { budgetLiveness } from "../../src/keys/live-budget";
import { TtlCache } from "../../src/lib/ttl-cache";
import type { DeliveryContext } from "../../src/webhooks/delivery-attempt";
import { dispatchEvents } from "../../src/webhooks/dispatch-pass";
import type { ConsumerContext } from "../../src/webhooks/queue-consumer";
import { clearOrders, seedOrders } from "./seed";
import { apiWith } from "./request";
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

/** The bindings with a dispatcher that does nothing when woken: these tests run the passes themselves. */
export const withoutDispatcher = (): Env => ({ ...env, WEBHOOK_DISPATCHER: { getByName: () => ({ wake: async () => {} }) } as unknown as Env["WEBHOOK_DISPATCHER"] });

/** Makes an endpoint through the API, without waking the dispatcher. */
export async function makeEndpoint(key: string, body: { url: string; types?: string[] }): Promise<{ id: string; secret: string }> {
  const response = await apiWith(
    withoutDispatcher(),
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

/** A delivery's row as the consumer and the sweeper leave it. */
export const deliveryRow = (id: string) =>
  env.DB.prepare("SELECT outcome, attempts, schedule_step, last_status, last_error, next_attempt_at FROM webhook_deliveries WHERE id = ?1").bind(id).first();

/** A receiver per URL: answers the statuses given in turn (200 after), or what `answer` makes; records each POST. */
export function receivers(answer: (url: string, signal: AbortSignal | undefined) => Promise<Response> | Response = () => new Response("ok")) {
  const posts: { url: string; webhookId: string }[] = [];
  const fetch = (async (url: string, init: RequestInit) => {
    posts.push({ url, webhookId: new Headers(init.headers).get("webhook-id")! });
    return answer(url, init.signal ?? undefined);
  }) as unknown as typeof globalThis.fetch;
  return { posts, fetch };
}

/** What the queue consumer is handed, over the real D1 and KV, with what it re-sends and moves to the slow lane recorded. */
export function consumerContext(overrides: Partial<ConsumerContext> & Pick<DeliveryContext, "fetch">): ConsumerContext & { resent: DeliveryMessage[]; slowed: DeliveryMessage[] } {
  const resent: DeliveryMessage[] = [];
  const slowed: DeliveryMessage[] = [];
  return {
    db: env.DB,
    sealingKey: env.WEBHOOK_SECRETS_KEY!,
    retrySeconds: [1, 2, 3],
    now: Date.now,
    budgetLiveness: (budget) => budgetLiveness(env.API_KEYS, budget, new TtlCache(10)),
    resend: async (message) => void resent.push(message),
    toSlowLane: async (message) => void slowed.push(message),
    resent,
    slowed,
    ...overrides,
  };
}

/** Pending deliveries of new orders to a new endpoint of the key's budget; their ids, in the order made. */
export async function pendingDeliveries(key: string, ids: number[], url = "https://receiver.example/hooks"): Promise<{ endpointId: string; secret: string; deliveryIds: string[] }> {
  const made = await makeEndpoint(key, { url });
  await seedOrders(ids.map((id) => ({ id })));
  const { queue, sent } = recordingQueue();
  await dispatchEvents(env.DB, queue, "0", new Date().toISOString());
  return { endpointId: made.id, secret: made.secret, deliveryIds: sent.map((message) => message.deliveryId) };
}

/** A statement whose every call fails, as one read during an outage. */
export function outageStatement(): D1PreparedStatement {
  const fail = () => Promise.reject(new Error("D1_ERROR: Network connection lost."));
  return { bind: () => outageStatement(), first: fail, all: fail, run: fail, raw: fail } as unknown as D1PreparedStatement;
}

/** The test's owner of webhook endpoints: a fresh one before each test of the file (freshWebhookOwner). */
export function webhookOwnerOfEachTest(): TestKey {
  const owner = {} as TestKey;
  beforeEach(async () => void Object.assign(owner, await freshWebhookOwner()));
  return owner;
}
