import { createServer, type IncomingHttpHeaders, type Server } from "node:http";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { verifyWebhook } from "../../client/src/store-orders-client";
import { useSharedService } from "../support/service-fixture";

/**
 * Webhooks end to end against the shared `npm start` (wrangler dev: D1
 * triggers, the dispatcher's alarms, the local Queue with its retries): a
 * receiver on this machine that fails each event's first attempt gets the
 * cancel's event again, with the same webhook-id, signed with the secret it
 * was given.
 */
const service = useSharedService();
const root = () => service.current.baseUrl.replace(/\/v1$/, "");
const call = (path: string, init: RequestInit = {}) =>
  fetch(`${root()}${path}`, {
    ...init,
    headers: {
      Authorization: `Bearer ${service.current.demoKey}`,
      "Content-Type": "application/json",
      ...init.headers,
    },
  });

interface Received {
  headers: IncomingHttpHeaders;
  body: string;
  status: number;
}

const received: Received[] = [];
let receiver: Server;
let receiverUrl = "";

beforeAll(async () => {
  const seen = new Set<string>();
  receiver = createServer((request, response) => {
    let body = "";
    request.on("data", (chunk: Buffer) => (body += chunk.toString()));
    request.on("end", () => {
      const id = String(request.headers["webhook-id"]);
      // Each event's first attempt fails: the retry must bring it again.
      const status = seen.has(id) ? 204 : 500;
      seen.add(id);
      received.push({ headers: request.headers, body, status });
      response.writeHead(status).end();
    });
  });
  await new Promise<void>((resolve) => receiver.listen(0, "127.0.0.1", resolve));
  receiverUrl = `http://127.0.0.1:${(receiver.address() as { port: number }).port}/hooks`;
});
afterAll(() => new Promise<void>((resolve) => receiver.close(() => resolve())));

describe("webhooks against npm start", () => {
  it("deliver a cancel's event to a local receiver, retried after a failure with the same webhook-id, signed", async () => {
    const created = await call("/v2/webhook-endpoints", {
      method: "POST",
      body: JSON.stringify({ url: receiverUrl, types: ["order.cancelled"] }),
    });
    expect(created.status).toBe(201);
    const endpoint = (await created.json()) as { id: string; secret: string };
    try {
      const page = (await (await call("/v2/store/orders?status=pending&limit=1")).text()).match(/"id":"(\d+)"/);
      const orderId = page![1]!;
      expect((await call(`/v2/store/orders/${orderId}`, { method: "DELETE" })).status).toBe(204);

      // Bounded by the test's timeout: the schedule's first retry is a second after the failure.
      await expect
        .poll(() => received.filter((request) => request.status === 204).length, { timeout: 30_000, interval: 100 })
        .toBe(1);
      expect(received.map((request) => request.status)).toEqual([500, 204]);
      const [first, retry] = received;
      expect(retry!.headers["webhook-id"]).toBe(first!.headers["webhook-id"]);
      for (const request of received) {
        const event = await verifyWebhook<{
          id: string;
          type: string;
          order: { id: string; status: string };
          previous: unknown;
        }>(endpoint.secret, request.headers as Record<string, string>, request.body);
        expect(event).toMatchObject({
          id: request.headers["webhook-id"],
          type: "order.cancelled",
          order: { id: orderId, status: "cancelled" },
          previous: { status: "pending" },
        });
      }
      // The same event in the feed, by its id.
      const eventId = String(first!.headers["webhook-id"]);
      const deliveries = (await (await call(`/v2/webhook-endpoints/${endpoint.id}/deliveries`)).json()) as {
        data: { eventId: string; outcome: string; attempts: number; lastStatus: number }[];
      };
      expect(deliveries.data).toEqual([
        expect.objectContaining({ eventId, outcome: "delivered", attempts: 2, lastStatus: 204 }),
      ]);
    } finally {
      expect((await call(`/v2/webhook-endpoints/${endpoint.id}`, { method: "DELETE" })).status).toBe(204);
    }
  });

  it("hold back no endpoint's deliveries while another endpoint's receiver hangs", async () => {
    // The slow receiver keeps every request open until the test ends it; the healthy one answers at once.
    const open = new Set<import("node:http").ServerResponse>();
    const healthyGot: string[] = [];
    const slow = createServer((request, response) => {
      open.add(response);
      response.on("close", () => open.delete(response));
      request.resume();
    });
    const healthy = createServer((request, response) => {
      let body = "";
      request.on("data", (chunk: Buffer) => (body += chunk.toString()));
      request.on("end", () => {
        healthyGot.push((JSON.parse(body) as { order: { id: string } }).order.id);
        response.writeHead(204).end();
      });
    });
    const listen = async (server: Server) => {
      await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
      return `http://127.0.0.1:${(server.address() as { port: number }).port}/hooks`;
    };
    const endpoints: string[] = [];
    try {
      for (const url of [await listen(slow), await listen(healthy)]) {
        const created = await call("/v2/webhook-endpoints", {
          method: "POST",
          body: JSON.stringify({ url, types: ["order.cancelled"] }),
        });
        expect(created.status).toBe(201);
        endpoints.push(((await created.json()) as { id: string }).id);
      }
      const ids = [
        ...(await (await call("/v2/store/orders?status=pending&limit=2")).text()).matchAll(/"id":"(\d+)"/g),
      ].map((match) => match[1]!);
      expect(ids).toHaveLength(2);
      expect((await call(`/v2/store/orders/${ids[0]}`, { method: "DELETE" })).status).toBe(204);
      await expect.poll(() => open.size, { timeout: 30_000, interval: 50 }).toBe(1);
      await expect.poll(() => healthyGot.includes(ids[0]!), { timeout: 30_000, interval: 50 }).toBe(true);

      // The second cancel reaches the healthy endpoint while the slow one's first attempt is still out: not yet
      // recorded, as it is once its 10 s are over (before, the queue's next batch waited for that).
      expect((await call(`/v2/store/orders/${ids[1]}`, { method: "DELETE" })).status).toBe(204);
      await expect.poll(() => healthyGot.includes(ids[1]!), { timeout: 30_000, interval: 50 }).toBe(true);
      const slowDeliveries = (await (await call(`/v2/webhook-endpoints/${endpoints[0]}/deliveries`)).json()) as {
        data: { attempts: number; outcome: string }[];
      };
      // Newest first: the first cancel's delivery is the last.
      expect(slowDeliveries.data.at(-1)).toMatchObject({ outcome: "pending", attempts: 0 });
    } finally {
      for (const response of open) response.writeHead(204).end();
      for (const id of endpoints)
        expect((await call(`/v2/webhook-endpoints/${id}`, { method: "DELETE" })).status).toBe(204);
      await Promise.all(
        [slow, healthy].map(
          (server) => new Promise<void>((resolve) => (server.close(() => resolve()), server.closeAllConnections())),
        ),
      );
    }
  });
});
