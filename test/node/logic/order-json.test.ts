import { describe, expect, it } from "vitest";
import { orderWriter, type DroppedValue } from "../../../src/orders/order-json";

const row = { id: "1", petId: null, quantity: null, shipDate: null, status: "pending", complete: 0 };

function write(
  values: Partial<typeof row> | Record<string, string | null>,
  version: "v1" | "v2" = "v1",
): { json: string; dropped: DroppedValue[] } {
  const dropped: DroppedValue[] = [];
  return { json: orderWriter(dropped, version)({ ...row, ...values } as typeof row), dropped };
}

describe("the order writer", () => {
  it("omits absent fields", () => {
    expect(write({}).json).toBe('{"id":1,"status":"pending","complete":false}');
  });

  it("writes int64 digits exactly", () => {
    const { json } = write({ id: "9223372036854775807", petId: "-9223372036854775808", quantity: "3" });
    expect(json).toBe(
      '{"id":9223372036854775807,"petId":-9223372036854775808,"quantity":3,"status":"pending","complete":false}',
    );
  });

  it("writes v2's int64s as strings of the same digits, and leaves out one that is not an int64 as v1 does", () => {
    const { json } = write({ id: "9223372036854775807", petId: "-9223372036854775808", quantity: "3" }, "v2");
    expect(json).toBe(
      '{"id":"9223372036854775807","petId":"-9223372036854775808","quantity":3,"status":"pending","complete":false}',
    );
    const odd = write({ petId: '2,"status":"delivered"' }, "v2");
    expect(odd.json).toBe('{"id":"1","status":"pending","complete":false}');
    expect(odd.dropped).toEqual([{ orderId: "1", column: "pet_id" }]);
  });

  it("normalises ship dates to UTC", () => {
    expect(JSON.parse(write({ shipDate: "2026-01-02T03:04:05-01:00" }).json).shipDate).toBe("2026-01-02T04:04:05.000Z");
  });

  it.each([
    ["petId", "abc", "pet_id"],
    ["petId", "1.5", "pet_id"],
    ["petId", "9223372036854775808", "pet_id"],
    ["petId", '2,"status":"delivered"', "pet_id"],
    ["quantity", "1.5", "quantity"],
    ["quantity", "9007199254740992", "quantity"],
    ["quantity", "", "quantity"],
    ["shipDate", "soon", "ship_date"],
    ["shipDate", "2026-13-45", "ship_date"],
    ["shipDate", "", "ship_date"],
  ])("leaves out %s %j and notes it as %s", (field, value, column) => {
    const { json, dropped } = write({ [field]: value });
    expect(json).toBe('{"id":1,"status":"pending","complete":false}');
    expect(dropped).toEqual([{ orderId: "1", column }]);
  });

  it("writes the status as a JSON string, and only a status the schema lists", () => {
    expect(JSON.parse(write({ status: "shipped", complete: 1 } as never).json)).toMatchObject({
      status: "shipped",
      complete: true,
    });
    // The table's CHECK allows no other; a row without it could only come from a table that lost its constraints.
    expect(() => write({ status: 'sh"ipped' })).toThrow(/status does not fit/);
  });
});
