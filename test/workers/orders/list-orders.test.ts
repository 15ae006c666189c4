import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { Order } from "../../../src/orders/order-schemas";
import { api, errorBodyOf } from "../../support/request";
import { clearOrders, seedManyOrders, seedOrders } from "../../support/seed";

beforeEach(clearOrders);
afterEach(() => vi.restoreAllMocks());

describe("GET /v1/store/orders", () => {
  it("answers 500 internal_error, never a list or a 304, when the list's version row is missing, and logs why", async () => {
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((line: unknown) => void errors.push(String(line)));
    await env.DB.prepare("DELETE FROM orders_version").run();
    try {
      expect(await errorBodyOf(await api("/v1/store/orders"))).toMatchObject({ code: "internal_error", status: 500 });
      const revalidated = await api("/v1/store/orders", { headers: { "If-None-Match": '"orders-none"' } });
      expect(await errorBodyOf(revalidated)).toMatchObject({ code: "internal_error", status: 500 });
      expect(errors.filter((line) => line.includes("the orders_version row is missing"))).toHaveLength(2);
    } finally {
      // Storage outlives a test in this file: the row goes back as a migration makes it.
      await env.DB.prepare(
        "INSERT INTO orders_version (singleton, epoch, version, stamp) VALUES (1, lower(hex(randomblob(6))), 0, " +
          "lower(hex(randomblob(6))))",
      ).run();
    }
  });

  it("returns an empty array when there are no orders", async () => {
    const response = await api("/v1/store/orders");
    expect(response.status).toBe(200);
    expect(response.headers.get("Content-Type")).toBe("application/json");
    expect(await response.text()).toBe("[]");
  });

  it("returns every order ascending by id with all fields", async () => {
    await seedOrders([
      { id: 3, petId: 7, quantity: 2, shipDate: "2026-03-01T10:00:00Z", status: "shipped", complete: true },
      { id: 1, petId: 5, quantity: 1, shipDate: "2026-02-01T09:30:00Z", status: "pending" },
      { id: 2, petId: 6, quantity: 4, status: "delivered", complete: true },
    ]);
    const orders = await (await api("/v1/store/orders")).json();
    expect(orders).toEqual([
      { id: 1, petId: 5, quantity: 1, shipDate: "2026-02-01T09:30:00.000Z", status: "pending", complete: false },
      { id: 2, petId: 6, quantity: 4, status: "delivered", complete: true },
      { id: 3, petId: 7, quantity: 2, shipDate: "2026-03-01T10:00:00.000Z", status: "shipped", complete: true },
    ]);
  });

  it("sends exactly what the documented Order schema describes", async () => {
    await seedOrders([
      { id: 1, petId: 2, quantity: 3, shipDate: "2026-02-01T09:30:00Z", status: "shipped", complete: true },
      { id: 2 },
    ]);
    const orders = await (await api("/v1/store/orders")).json();
    expect(Order.array().safeParse(orders).success).toBe(true);
    expect(Order.array().parse(orders)).toEqual(orders);
  });

  it("omits absent fields instead of sending null", async () => {
    await seedOrders([{ id: 10 }]);
    const text = await (await api("/v1/store/orders")).text();
    expect(text).toBe('[{"id":10,"status":"pending","complete":false}]');
  });

  it("presents ship dates as RFC 3339 in UTC", async () => {
    await seedOrders([{ id: 1, shipDate: "2026-05-01T12:00:00+02:00" }]);
    const [order] = await (await api("/v1/store/orders")).json<{ shipDate: string }[]>();
    expect(order.shipDate).toBe("2026-05-01T10:00:00.000Z");
  });

  it("keeps int64 ids exact up to 2^63-1, and negative ones down to -2^63", async () => {
    await seedOrders([
      { id: 9223372036854775807n, petId: 9223372036854775806n },
      { id: 9007199254740993n, petId: 1 },
      { id: -9223372036854775808n },
    ]);
    const text = await (await api("/v1/store/orders")).text();
    expect(text).toBe(
      '[{"id":-9223372036854775808,"status":"pending","complete":false},' +
        '{"id":9007199254740993,"petId":1,"status":"pending","complete":false},' +
        '{"id":9223372036854775807,"petId":9223372036854775806,"status":"pending","complete":false}]',
    );
  });

  it("streams 20,000 orders with every id exactly once, in order", async () => {
    await seedManyOrders(20_000);
    const response = await api("/v1/store/orders");
    expect(response.status).toBe(200);
    const orders = await response.json<{ id: number }[]>();
    expect(orders).toHaveLength(20_000);
    orders.forEach((order, index) => {
      if (order.id !== index + 1) expect.fail(`position ${index} holds id ${order.id}`);
    });
  });

  it("lists pages that end exactly on the page size without losing or repeating orders", async () => {
    await seedManyOrders(2000);
    const orders = await (await api("/v1/store/orders")).json<{ id: number }[]>();
    expect(orders.map((order) => order.id)).toEqual(Array.from({ length: 2000 }, (_, i) => i + 1));
  });
});

describe("ETag revalidation", () => {
  it("answers 304 with no body when If-None-Match matches", async () => {
    await seedOrders([{ id: 1 }]);
    const first = await api("/v1/store/orders");
    const etag = first.headers.get("ETag");
    expect(etag).toMatch(/^"orders-[0-9a-f]+-\d+-[0-9a-f]+"$/);

    const again = await api("/v1/store/orders", { headers: { "If-None-Match": etag! } });
    expect(again.status).toBe(304);
    expect(again.headers.get("ETag")).toBe(etag);
    expect(await again.text()).toBe("");
  });

  it("matches weak tags, lists of tags and *", async () => {
    const etag = (await api("/v1/store/orders")).headers.get("ETag")!;
    for (const header of [`W/${etag}`, `"other", ${etag}`, "*"]) {
      expect((await api("/v1/store/orders", { headers: { "If-None-Match": header } })).status).toBe(304);
    }
  });

  it("sends the list when If-None-Match does not follow RFC 9110's grammar, even if it holds the current tag", async () => {
    const etag = (await api("/v1/store/orders")).headers.get("ETag")!;
    for (const header of [`"x", *`, `garbage, ${etag}`, `${etag} ${etag}`]) {
      expect((await api("/v1/store/orders", { headers: { "If-None-Match": header } })).status, header).toBe(200);
    }
  });

  it("changes the ETag when any order is written, so stale copies get the new list", async () => {
    await seedOrders([{ id: 1 }]);
    const etag = (await api("/v1/store/orders")).headers.get("ETag")!;
    await api("/v1/store/orders/1", { method: "DELETE" });

    const after = await api("/v1/store/orders", { headers: { "If-None-Match": etag } });
    expect(after.status).toBe(200);
    expect(after.headers.get("ETag")).not.toBe(etag);
    expect(await after.json()).toEqual([{ id: 1, status: "cancelled", complete: false }]);
  });

  it("answers 200 with the list for a stale tag", async () => {
    await seedOrders([{ id: 1 }]);
    const response = await api("/v1/store/orders", { headers: { "If-None-Match": '"orders-stale-0"' } });
    expect(response.status).toBe(200);
    expect(await response.json()).toHaveLength(1);
  });
});
