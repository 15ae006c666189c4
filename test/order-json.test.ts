import { describe, expect, it } from "vitest";
import { orderJson } from "../src/lib/order-json";

const row = { id: "1", petId: null, quantity: null, shipDate: null, status: "pending", complete: 0 };

describe("orderJson", () => {
  it("omits absent fields", () => {
    expect(orderJson(row)).toBe('{"id":1,"status":"pending","complete":false}');
  });

  it("writes int64 digits exactly", () => {
    const json = orderJson({ ...row, id: "9223372036854775807", petId: "-9223372036854775808", quantity: "3" });
    expect(json).toBe('{"id":9223372036854775807,"petId":-9223372036854775808,"quantity":3,"status":"pending","complete":false}');
  });

  it("normalises ship dates to UTC and keeps unparseable ones as stored", () => {
    expect(JSON.parse(orderJson({ ...row, shipDate: "2026-01-02T03:04:05-01:00" })).shipDate).toBe("2026-01-02T04:04:05.000Z");
    expect(JSON.parse(orderJson({ ...row, shipDate: "soon" })).shipDate).toBe("soon");
  });

  it("escapes the status as a JSON string", () => {
    expect(JSON.parse(orderJson({ ...row, status: 'sh"ipped', complete: 1 }))).toMatchObject({ status: 'sh"ipped', complete: true });
  });
});
