import { fc, test } from "@fast-check/vitest";
import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { isCanonicalInt64 } from "../../../src/lib/int64";
import { Order, ORDER_STATUSES } from "../../../src/orders/order-schemas";
import { api } from "../../support/request";
import {
  clearOrders,
  insertRawOrder,
  rawOrderInsert,
  withoutWriteGuards,
  type RawOrder,
  type SqliteValue,
} from "../../support/seed";

/**
 * The order table is shared with other systems, so the list must be valid
 * JSON in the documented shape whatever they wrote (docs/design/order-list.md#data-model).
 */

// Each run writes a table of up to 8 arbitrary rows and lists it: 50 runs put each of the 9 kinds of value in each
// column about 25 times, and the seed changes every run of the suite; more runs cost suite time, not coverage.
const RUNS = { numRuns: 50 };
const TIMEOUT = 120_000;

/** JSON.parse with each order's exact id text: JSON numbers above 2^53 would be rounded. */
function parseList(text: string): { orders: unknown[]; ids: string[] } {
  const ids: string[] = [];
  const orders = JSON.parse(text, function (this: unknown, key, value, context?: { source?: string }) {
    if (key === "id" && typeof value === "number") {
      ids.push(context!.source!);
      // The schema checks the id is an integer; its digits are checked exactly above.
      return 1;
    }
    if (key === "petId" && typeof value === "number") {
      expect(isCanonicalInt64(context!.source!)).toBe(true);
      return 1;
    }
    return value;
  }) as unknown[];
  return { orders, ids };
}

const int64 = fc.bigInt({ min: -(2n ** 63n), max: 2n ** 63n - 1n });
const dateLike = fc.oneof(
  fc
    .date({ min: new Date(-62_167_219_200_000), max: new Date(253_402_300_799_999), noInvalidDate: true })
    .map((d) => d.toISOString()),
  fc
    .tuple(
      fc.integer({ min: 0, max: 9999 }),
      fc.integer({ min: 0, max: 13 }),
      fc.integer({ min: 0, max: 32 }),
      fc.integer({ min: 0, max: 61 }),
    )
    .map(([y, mo, d, s]) => {
      const [year, month, day, second] = [
        [y, 4],
        [mo, 2],
        [d, 2],
        [s, 2],
      ].map(([n, w]) => String(n).padStart(w!, "0"));
      return `${year}-${month}-${day}T23:59:${second}`;
    })
    .chain((base) =>
      fc.constantFrom(
        base,
        `${base}Z`,
        `${base}.5+05:30`,
        `${base}-24:00`,
        `${base}+01:00`,
        `${base}z`,
        base.replace("T", " "),
      ),
    ),
  fc.constantFrom(
    "",
    "2026-13-45",
    "soon",
    "2026-11-02T09:00:00Z",
    "0000-01-01T00:00:00+01:00",
    "9999-12-31T23:59:59-00:01",
  ),
);
const injection = fc.constantFrom(
  '2,"status":"delivered","complete":true},{"id":99999999,"status":"pending","complete":false',
  "abc",
  "1]",
  '"',
  "\\",
  "\u2028",
  "NaN",
);
/** Any SQLite value of any type: integers in and out of every range, reals, text of every kind, blobs. */
const sqliteValue: fc.Arbitrary<SqliteValue> = fc.oneof(
  fc.constant(null),
  int64.map(String),
  fc.bigInt({ min: -(2n ** 70n), max: 2n ** 70n }).map(String),
  fc.integer(),
  fc.double({ noNaN: true, noDefaultInfinity: true }),
  fc.string({ unit: "binary", maxLength: 40 }),
  dateLike,
  injection,
  fc.uint8Array({ maxLength: 16 }).map((bytes) => bytes.slice().buffer as ArrayBuffer),
);
const rawOrders = fc.uniqueArray(int64, { minLength: 1, maxLength: 8 }).chain((ids) =>
  fc.tuple(
    ...ids.map((id) =>
      fc.record({
        id: fc.constant(String(id)),
        petId: sqliteValue,
        quantity: sqliteValue,
        shipDate: sqliteValue,
        status: fc.constantFrom(...ORDER_STATUSES),
        complete: fc.constantFrom(0 as const, 1 as const),
      }),
    ),
  ),
);

async function tableIds(): Promise<string[]> {
  const { results } = await env.DB.prepare("SELECT CAST(id AS TEXT) AS id FROM orders ORDER BY orders.id").all<{
    id: string;
  }>();
  return results.map((row) => row.id);
}

beforeEach(clearOrders);

describe("the list is valid whatever other systems wrote", () => {
  test.prop([rawOrders], RUNS)(
    "parses strictly, every element is an Order, one element per row, and no id that is not in the table",
    async (orders: RawOrder[]) => {
      await clearOrders();
      // One batch: the guards are gone, so no row is refused, and each D1 call costs a run its time.
      await withoutWriteGuards(() => env.DB.batch(orders.map(rawOrderInsert)));
      const response = await api("/v1/store/orders");
      expect(response.status).toBe(200);
      const { orders: listed, ids } = parseList(await response.text());
      for (const order of listed) expect(Order.strict().safeParse(order).error).toBeUndefined();
      expect(listed).toHaveLength(orders.length);
      expect(ids).toEqual(await tableIds());
    },
    TIMEOUT,
  );

  test.prop([rawOrders], RUNS)(
    "the write guards accept exactly what the list can show: an accepted row lists with every field it has",
    async (orders: RawOrder[]) => {
      await clearOrders();
      const accepted: RawOrder[] = [];
      for (const order of orders) {
        const written = await insertRawOrder(order).then(
          () => true,
          () => false,
        );
        if (written) accepted.push(order);
      }
      expect(await tableIds()).toHaveLength(accepted.length);
      const { orders: listed, ids } = parseList(await (await api("/v1/store/orders")).text());
      const byId = new Map(accepted.map((order) => [order.id, order]));
      listed.forEach((order, index) => {
        const raw = byId.get(ids[index]!)!;
        expect("petId" in (order as object)).toBe(raw.petId !== null);
        expect("quantity" in (order as object)).toBe(raw.quantity !== null);
        expect("shipDate" in (order as object)).toBe(raw.shipDate !== null);
      });
    },
    TIMEOUT,
  );
});

describe("values that do not fit are left out, not pasted in", () => {
  afterEach(() => vi.restoreAllMocks());

  const legacyRow = (id: string, values: Partial<RawOrder>): RawOrder => ({
    id,
    petId: null,
    quantity: null,
    shipDate: null,
    status: "pending",
    complete: 0,
    ...values,
  });

  it("cannot be used to forge an order or break the JSON, and logs one warning naming ids and columns", async () => {
    const warn = vi.spyOn(console, "warn");
    const forged = '2,"status":"delivered","complete":true},{"id":99999999,"status":"pending","complete":false';
    await withoutWriteGuards(async () => {
      await insertRawOrder(legacyRow("1", { petId: forged }));
      await insertRawOrder(legacyRow("2", { petId: "abc", quantity: 1.5, shipDate: "2026-13-45" }));
      await insertRawOrder(legacyRow("3", { shipDate: "" }));
    });
    const text = await (await api("/v1/store/orders")).text();
    expect(JSON.parse(text)).toEqual([
      { id: 1, status: "pending", complete: false },
      { id: 2, status: "pending", complete: false },
      { id: 3, status: "pending", complete: false },
    ]);

    const lines = warn.mock.calls.map(([line]) => JSON.parse(String(line)) as Record<string, unknown>);
    expect(lines).toHaveLength(1);
    expect(lines[0]).toMatchObject({
      level: "warn",
      count: 5,
      values: [
        { orderId: "1", column: "pet_id" },
        { orderId: "2", column: "pet_id" },
        { orderId: "2", column: "quantity" },
        { orderId: "2", column: "ship_date" },
        { orderId: "3", column: "ship_date" },
      ],
    });
    expect(String(warn.mock.calls[0]![0])).not.toContain("99999999");
  });

  it("still cancels a pending row that holds a bad value from before the guards", async () => {
    await withoutWriteGuards(() => insertRawOrder(legacyRow("7", { petId: "abc", shipDate: "soon" })));
    expect((await api("/v1/store/orders/7", { method: "DELETE" })).status).toBe(204);
    const row = await env.DB.prepare("SELECT status, pet_id FROM orders WHERE id = 7").first();
    expect(row).toEqual({ status: "cancelled", pet_id: "abc" });
  });
});

describe("write guards (migrations/0001_baseline.sql)", () => {
  const insert = (values: Partial<RawOrder>) =>
    insertRawOrder({ id: "5", petId: null, quantity: null, shipDate: null, status: "pending", complete: 0, ...values });

  it.each([
    [{ petId: "abc" }, /orders\.pet_id must be NULL or an integer/],
    [{ quantity: 1.5 }, /orders\.quantity must be NULL or an integer/],
    [{ quantity: "9007199254740992" }, /orders\.quantity must be NULL or an integer/],
    [{ shipDate: "2026-13-45" }, /orders\.ship_date must be NULL or an RFC 3339 date-time/],
    [{ shipDate: "" }, /orders\.ship_date must be NULL or an RFC 3339 date-time/],
    [{ shipDate: "2026-02-30T00:00:00Z" }, /orders\.ship_date/],
  ])("refuses %j with a message naming the column", async (values, message) => {
    await expect(insert(values)).rejects.toThrow(message);
    expect(await tableIds()).toEqual([]);
  });

  it("accepts integers written as text, and RFC 3339 date-times with offsets and fractions", async () => {
    await insert({ petId: "9223372036854775807", quantity: "3", shipDate: "2024-02-29t23:59:59.123456+05:30" });
    expect(await (await api("/v1/store/orders")).text()).toBe(
      '[{"id":5,"petId":9223372036854775807,"quantity":3,' +
        '"shipDate":"2024-02-29T18:29:59.123Z","status":"pending","complete":false}]',
    );
  });

  it("refuses an update that writes a bad value, but not one that leaves it as it was", async () => {
    await insert({});
    await expect(env.DB.prepare("UPDATE orders SET ship_date = 'tomorrow' WHERE id = 5").run()).rejects.toThrow(
      /ship_date/,
    );
    await expect(env.DB.prepare("UPDATE orders SET pet_id = 'x' WHERE id = 5").run()).rejects.toThrow(/pet_id/);
    await expect(env.DB.prepare("UPDATE orders SET quantity = 0.5 WHERE id = 5").run()).rejects.toThrow(/quantity/);
    await env.DB.prepare("UPDATE orders SET quantity = quantity, status = 'shipped' WHERE id = 5").run();
  });
});
