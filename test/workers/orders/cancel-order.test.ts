import { beforeEach, describe, expect, it } from "vitest";
import { api, errorBodyOf } from "../../support/request";
import { clearOrders, orderStatus, ordersVersion, seedOrders } from "../../support/seed";

beforeEach(clearOrders);

const cancel = (id: string) => api(`/v1/store/orders/${id}`, { method: "DELETE" });

describe("DELETE /v1/store/orders/{orderId}", () => {
  it("cancels a pending order: 204, no body, status cancelled", async () => {
    await seedOrders([{ id: 1, status: "pending" }]);
    const response = await cancel("1");
    expect(response.status).toBe(204);
    expect(await response.text()).toBe("");
    expect(await orderStatus(1)).toBe("cancelled");
  });

  it("records when the order was cancelled", async () => {
    await seedOrders([{ id: 1 }]);
    await cancel("1");
    const { env } = await import("cloudflare:workers");
    const row = await env.DB.prepare("SELECT cancelled_at, updated_at FROM orders WHERE id = 1").first<{
      cancelled_at: string;
      updated_at: string;
    }>();
    expect(Date.parse(row!.cancelled_at)).toBeGreaterThan(Date.parse("2026-01-01T00:00:00Z"));
    expect(row!.updated_at).toBe(row!.cancelled_at);
  });

  it("is idempotent: cancelling a cancelled order is 204 again and changes nothing", async () => {
    await seedOrders([{ id: 1, status: "cancelled" }]);
    const before = await ordersVersion();
    expect((await cancel("1")).status).toBe(204);
    expect(await ordersVersion()).toBe(before);
  });

  it.each(["shipped", "delivered"] as const)("refuses a %s order with 409 and leaves it unchanged", async (status) => {
    await seedOrders([{ id: 5, status }]);
    const response = await cancel("5");
    expect(response.status).toBe(409);
    expect(await errorBodyOf(response)).toMatchObject({ code: "order_already_shipped", status: 409 });
    expect(await orderStatus(5)).toBe(status);
  });

  it("answers 404 order_not_found for an order that does not exist", async () => {
    const response = await cancel("404");
    expect(await errorBodyOf(response)).toMatchObject({ code: "order_not_found", status: 404 });
  });

  it("cancels an order whose id is 2^63-1", async () => {
    await seedOrders([{ id: 9223372036854775807n }, { id: 9223372036854775806n }]);
    expect((await cancel("9223372036854775807")).status).toBe(204);
    expect(await orderStatus(9223372036854775807n)).toBe("cancelled");
    expect(await orderStatus(9223372036854775806n)).toBe("pending");
  });

  it("changes an order exactly once under concurrent cancels", async () => {
    await seedOrders([{ id: 1 }]);
    const before = await ordersVersion();
    const responses = await Promise.all(Array.from({ length: 25 }, () => cancel("1")));
    expect(responses.map((response) => response.status)).toEqual(Array(25).fill(204));
    expect(await orderStatus(1)).toBe("cancelled");
    // The version trigger fires once per changed row.
    expect(await ordersVersion()).toBe(before + 1);
  });

  it.each([
    ["abc", "abc"],
    ["a decimal", "1.5"],
    ["a leading zero", "007"],
    ["2^63", "9223372036854775808"],
    ["below -2^63", "-9223372036854775809"],
    ["an empty id", ""],
    ["a plus sign", "+1"],
    ["whitespace", "%201"],
    ["an exponent", "1e3"],
    ["a very long number", "9".repeat(5000)],
  ])("answers 400 invalid_order_id for %s", async (_, id) => {
    const response = await cancel(id);
    expect(await errorBodyOf(response)).toMatchObject({ code: "invalid_order_id", status: 400 });
  });

  it("accepts the smallest int64 as a valid id", async () => {
    expect((await cancel("-9223372036854775808")).status).toBe(404);
  });
});
