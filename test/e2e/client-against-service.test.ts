import { describe, expect, it } from "vitest";
import { StoreOrdersClient } from "../../client/src/store-orders-client";
import { useKeysCommand } from "../support/npm-script";
import { useSharedService } from "../support/service-fixture";
import { SYNTHETIC_ORDERS } from "../support/shared-service";

/**
 * The client against the shared `npm start -- --orders 100000`: synthetic orders with ids just beyond 2^53, and the
 * demo data.
 */
const service = useSharedService();
const keys = useKeysCommand(() => service.statePath);

/**
 * A client on the service, recording each response's status and Retry-After, and each wait (`wait` stands in for the
 * clock).
 */
function clientOf(
  apiKey = service.current.demoKey,
  wait = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms)),
) {
  const responses: { status: number; retryAfter: string | null }[] = [];
  const waits: number[] = [];
  const client = new StoreOrdersClient({
    baseUrl: `${service.current.baseUrl}/v1`,
    apiKey,
    fetch: async (input, init) => {
      const response = await fetch(input, init);
      responses.push({ status: response.status, retryAfter: response.headers.get("Retry-After") });
      return response;
    },
    sleep: (ms) => {
      waits.push(ms);
      return wait(ms);
    },
  });
  return { client, responses, waits };
}

describe("the TypeScript client against npm start", () => {
  it("lists every id exactly, up to 9223372036854775807, and cancels by exact id; the next list sees the cancel", async () => {
    const { client } = clientOf();
    const orders = await client.listOrders();
    expect(orders).toHaveLength(37 + SYNTHETIC_ORDERS);
    expect(new Set(orders.map((order) => order.id)).size).toBe(37 + SYNTHETIC_ORDERS);
    const largest = orders.find((order) => order.id === "9223372036854775807");
    expect(largest).toMatchObject({ petId: "9223372036854775807", status: "pending" });
    // 2^53 + 1 and 2^53 + 2 are one double: only exact ids tell them apart.
    expect(orders.find((order) => order.id === "9007199254740993")?.status).toBe("pending");
    expect(orders.find((order) => order.id === "9007199254740994")?.status).toBe("shipped");

    await client.cancelOrder("9223372036854775807");
    await client.cancelOrder(9007199254740993n);
    const after = await client.listOrders();
    const status = (id: string) => after.find((order) => order.id === id)?.status;
    expect(status("9223372036854775807")).toBe("cancelled");
    expect(status("9007199254740993")).toBe("cancelled");
    expect(status("9007199254740994")).toBe("shipped");
    expect(client.bookmark).toBeDefined();
  });

  it("returns the list it holds on 304", async () => {
    const { client, responses } = clientOf();
    const first = await client.listOrders();
    const second = await client.listOrders();
    expect(responses.map((response) => response.status)).toEqual([200, 304]);
    expect(second).toBe(first);
    expect(client.rateLimit?.windows.map((window) => window.name)).toEqual(["minute", "day"]);
  });

  it("fails with the Error shape and the request id", async () => {
    const { client } = clientOf();
    await expect(client.cancelOrder("9007199254740994")).rejects.toMatchObject({
      name: "StoreOrdersError",
      code: "order_already_shipped",
      status: 409,
      requestId: expect.any(String),
    });
  });

  it("retries a 429 after its Retry-After, and then succeeds", async () => {
    const minute = () => Math.floor(Date.now() / 60_000);
    for (let attempt = 1; ; attempt++) {
      const created = await keys.run(
        "create",
        "--plan",
        "enterprise",
        "--per-minute",
        "1",
        "--per-day",
        "1000",
        "--json",
      );
      const { id, key } = JSON.parse(created.stdout.trim()) as { id: string; key: string };
      // The window passing, without waiting for the clock: the operator raises the limit, which every location has
      // within a lease (5 s).
      const windowPasses = async () => {
        await keys.run(
          "update",
          id,
          "--per-minute",
          "1000",
          "--per-day",
          "1000",
          "--base-url",
          service.current.baseUrl,
        );
        for (
          let deadline = Date.now() + 10_000;
          Date.now() < deadline;
          await new Promise((resolve) => setTimeout(resolve, 500))
        ) {
          const probe = await fetch(`${service.current.baseUrl}/v1/openapi.json`, {
            headers: { Authorization: `Bearer ${key}` },
          });
          await probe.arrayBuffer();
          if (probe.status === 200) return;
        }
      };
      const { client, responses, waits } = clientOf(key, windowPasses);
      const began = minute();
      await client.listOrders();
      expect(responses).toEqual([{ status: 200, retryAfter: null }]);
      const again = await client.listOrders();
      // A minute that began between the two lists admits the second, as it should (the service shares this machine's
      // clock): on a busy machine a list takes seconds, so the case runs again, with a new key, until both fall in one
      // minute.
      if (responses[1]?.status !== 429 && minute() !== began && attempt < 3) continue;
      expect(again.length).toBeGreaterThan(0);
      // The retry revalidates the list the client holds.
      expect(responses.map((response) => response.status)).toEqual([200, 429, 304]);
      expect(waits).toEqual([Number(responses[1]!.retryAfter) * 1000]);
      return;
    }
  });

  it("follows the event feed from where it stands, and sees a cancel as order.cancelled with what it was", async () => {
    const { client } = clientOf();
    // To the feed's head without reading the 100,000 creations: a type nothing has is one short page.
    const head = client.v2.events.follow({ types: ["order.deleted"], waitSeconds: 0, untilCaughtUp: true });
    for await (const _ of head);
    expect(head.cursor).toEqual(expect.any(String));
    let pending: string | undefined;
    for await (const order of client.v2.orders.list({ status: ["pending"], limit: 5 })) {
      pending = order.id;
      break;
    }
    await client.v2.orders.cancel(pending!);
    const events = [];
    for await (const event of client.v2.events.follow({ after: head.cursor, waitSeconds: 0, untilCaughtUp: true }))
      events.push(event);
    expect(events).toEqual([
      expect.objectContaining({
        type: "order.cancelled",
        order: expect.objectContaining({ id: pending, status: "cancelled" }),
        previous: { status: "pending" },
      }),
    ]);
  });
});
