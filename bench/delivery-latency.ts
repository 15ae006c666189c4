/**
 * Webhook delivery latency: changes written at a steady rate, and for each
 * its event's way from the commit (the event's `createdAt`, D1's clock on
 * this machine) to its first arrival at a receiver on this machine that
 * answers 204 at once. What the dispatcher's nudge, its one-second poll and
 * the lane's alarm add up to (docs/design/order-events.md#dispatch).
 */
import type { Arrival, WebhookReceiver } from "../scripts/lib/webhook-receiver";
import { percentile, type DeliveryRow } from "./report";

/**
 * Writes `changes` changes, `perSecond` of them a second (`write(i)` makes the
 * i-th), then waits up to `patienceMs` for their events (`ours`) to arrive.
 */
export async function measureDelivery(
  name: string,
  receiver: WebhookReceiver,
  options: {
    changes: number;
    perSecond: number;
    patienceMs: number;
    write(index: number): Promise<void>;
    ours(arrival: Arrival): boolean;
  },
): Promise<DeliveryRow> {
  const started = Date.now();
  await Promise.all(
    Array.from({ length: options.changes }, (_, index) =>
      new Promise((resolve) => setTimeout(resolve, started + (index * 1000) / options.perSecond - Date.now())).then(
        () => options.write(index),
      ),
    ),
  );
  const arrived = () => [...receiver.arrivals.values()].filter(options.ours);
  const deadline = Date.now() + options.patienceMs;
  while (arrived().length < options.changes && Date.now() < deadline)
    await new Promise((resolve) => setTimeout(resolve, 100));
  const latencies = arrived()
    .map((arrival) => arrival.receivedAt - Date.parse(arrival.createdAt))
    .sort((a, b) => a - b);
  return {
    name,
    changes: options.changes,
    perSecond: options.perSecond,
    delivered: latencies.length,
    p50Ms: percentile(latencies, 0.5),
    p99Ms: percentile(latencies, 0.99),
    maxMs: latencies.at(-1) ?? NaN,
  };
}
