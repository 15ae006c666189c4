/**
 * A webhook receiver on this machine for `npm run stress` and `npm run
 * bench`: it verifies each request with the endpoint's secret (when it has
 * been told it), can refuse some first attempts so retries are exercised, and
 * keeps the first acknowledged arrival of each event by its webhook-id, as a
 * receiver that deduplicates would (docs/api.md#receiving-webhooks).
 */
import { createServer } from "node:http";
import { verifyWebhook } from "../../client/src/verify-webhook";

export interface Arrival {
  type: string;
  orderId: string;
  createdAt: string;
  /** This process's clock, Unix ms, when the request arrived. */
  receivedAt: number;
}

export interface WebhookReceiver {
  url: string;
  /** The endpoint's secret, once it was created: every request is verified with it from then on. */
  secret: string | undefined;
  /** The first acknowledged arrival of each event, by its webhook-id. */
  arrivals: Map<string, Arrival>;
  /** Requests refused on purpose (500), to be retried. */
  refused: number;
  /** Acknowledged requests of an event already acknowledged (at least once allows them). */
  duplicates: number;
  /** Requests whose signature or timestamp did not verify: each a reason. */
  rejected: string[];
  close(): Promise<void>;
}

/**
 * `refuseFirst`: the fraction of events whose first attempt is answered 500; `answerAfterMs`: how long it takes to
 * answer each.
 */
export async function startWebhookReceiver(
  options: { refuseFirst?: number; answerAfterMs?: number } = {},
): Promise<WebhookReceiver> {
  const attempted = new Set<string>();
  const server = createServer((request, response) => {
    const receivedAt = Date.now();
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", async () => {
      if (options.answerAfterMs) await new Promise((resolve) => setTimeout(resolve, options.answerAfterMs));
      const id = String(request.headers["webhook-id"]);
      try {
        if (receiver.secret) await verifyWebhook(receiver.secret, request.headers as Record<string, string>, body);
      } catch (error) {
        receiver.rejected.push(`${id}: ${(error as Error).message}`);
        response.writeHead(400).end();
        return;
      }
      const firstAttempt = !attempted.has(id);
      attempted.add(id);
      if (firstAttempt && Math.random() < (options.refuseFirst ?? 0)) {
        receiver.refused += 1;
        response.writeHead(500).end();
        return;
      }
      if (receiver.arrivals.has(id)) receiver.duplicates += 1;
      else {
        const event = JSON.parse(body) as { type: string; createdAt: string; order: { id: number | string } };
        receiver.arrivals.set(id, {
          type: event.type,
          orderId: String(event.order.id),
          createdAt: event.createdAt,
          receivedAt,
        });
      }
      response.writeHead(204).end();
    });
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  const receiver: WebhookReceiver = {
    url: `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`,
    secret: undefined,
    arrivals: new Map(),
    refused: 0,
    duplicates: 0,
    rejected: [],
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
  return receiver;
}
