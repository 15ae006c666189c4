import { env } from "cloudflare:workers";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import type { OrderFilters } from "../../../src/orders/pages/order-filters";
import { api, errorBodyOf } from "../../support/request";
import { clearOrders, seedOrders, type SeedOrder } from "../../support/seed";
import { idsOf, page, walk, STATUSES, type ListedOrder } from "../../support/v2-pages";

/** GET /v2/store/orders: the query, strictly, and its pages, walked against v1's list filtered the same way. */

/** v1's whole list, filtered in JavaScript the way the v2 filters say: the reference a walk must equal. */
async function v1Filtered(filters: OrderFilters): Promise<string[]> {
  const body = await (await api("/v1/store/orders")).text();
  const orders = JSON.parse(body.replace(/"(id|petId)":(-?\d+)/g, '"$1":"$2"')) as (ListedOrder & {
    id: string;
    petId?: string;
  })[];
  const instant = (text: string) => Date.parse(text);
  return orders
    .filter((order) => !filters.status || filters.status.includes(order.status as (typeof STATUSES)[number]))
    .filter((order) => filters.petId === undefined || order.petId === filters.petId)
    .filter((order) => filters.complete === undefined || order.complete === filters.complete)
    .filter(
      (order) =>
        filters.shipDateFrom === undefined ||
        (order.shipDate !== undefined && instant(order.shipDate) >= instant(filters.shipDateFrom)),
    )
    .filter(
      (order) =>
        filters.shipDateTo === undefined ||
        (order.shipDate !== undefined && instant(order.shipDate) < instant(filters.shipDateTo)),
    )
    .map((order) => order.id);
}

const queryOf = (filters: OrderFilters) => {
  const params = new URLSearchParams();
  if (filters.status) params.set("status", filters.status.join(","));
  if (filters.petId !== undefined) params.set("petId", filters.petId);
  if (filters.complete !== undefined) params.set("complete", String(filters.complete));
  if (filters.shipDateFrom !== undefined) params.set("shipDateFrom", filters.shipDateFrom);
  if (filters.shipDateTo !== undefined) params.set("shipDateTo", filters.shipDateTo);
  return params.toString();
};

beforeEach(clearOrders);
afterEach(() => vi.restoreAllMocks());

describe("GET /v2/store/orders: the query", () => {
  it.each([
    ["an unknown parameter", "state=pending", /Unknown query parameter "state"/],
    // Names every object inherits are no parameters either.
    ["constructor", "constructor=1", /Unknown query parameter "constructor"/],
    ["toString", "toString=1", /Unknown query parameter "toString"/],
    ["__proto__", "__proto__=1", /Unknown query parameter "__proto__"/],
    ["a repeated parameter", "status=pending&status=shipped", /status is given more than once/],
    [
      "an unknown status",
      "status=pending,lost",
      /status must be one or more of pending, shipped, delivered, cancelled/,
    ],
    ["an empty status", "status=", /status must be/],
    ["a petId that is not an int64", "petId=9223372036854775808", /petId must be a decimal 64-bit integer/],
    ["a petId with a leading zero", "petId=07", /petId must be/],
    ["complete that is not a boolean", "complete=yes", /complete must be true or false/],
    ["a date that is not RFC 3339", "shipDateFrom=2026-01-01", /shipDateFrom must be an RFC 3339 date-time/],
    ["an impossible date", "shipDateTo=2026-02-30T00:00:00Z", /shipDateTo must be an RFC 3339 date-time/],
    ["a zero limit", "limit=0", /limit must be a whole number from 1 to 1000/],
    ["a limit over 1000", "limit=1001", /limit must be/],
    ["a limit that is not a number", "limit=ten", /limit must be/],
  ])("answers 400 invalid_query for %s, naming the parameter", async (_, query, message) => {
    const { response } = await page(query);
    const error = await errorBodyOf(response);
    expect(error).toMatchObject({ code: "invalid_query", status: 400 });
    expect(error.message).toMatch(message);
  });

  it("answers 400 invalid_cursor for a cursor it did not make, and for one made with other filters", async () => {
    await seedOrders([1, 2, 3].map((id) => ({ id, status: "pending" as const })));
    for (const cursor of ["abc", "bm90LWEtY3Vyc29y", "x".repeat(500)]) {
      expect(await errorBodyOf((await page(`cursor=${cursor}`)).response)).toMatchObject({
        code: "invalid_cursor",
        status: 400,
      });
    }
    const first = await page("status=pending&limit=1");
    const cursor = encodeURIComponent(first.page.nextCursor!);
    const other = await errorBodyOf((await page(`status=shipped&limit=1&cursor=${cursor}`)).response);
    expect(other).toMatchObject({ code: "invalid_cursor" });
    expect(other.message).toMatch(/other filters/);
    // The limit may change between pages.
    expect(idsOf((await page(`status=pending&limit=5&cursor=${cursor}`)).body)).toEqual(["2", "3"]);
  });

  it("needs a key with orders:read, and limits like v1, with the same rate-limit headers", async () => {
    const response = await api("/v2/store/orders", { key: null });
    expect(await errorBodyOf(response)).toMatchObject({ code: "missing_api_key" });
    const listed = await api("/v2/store/orders");
    expect(listed.status).toBe(200);
    for (const header of [
      "X-RateLimit-Limit",
      "X-RateLimit-Remaining",
      "RateLimit",
      "RateLimit-Policy",
      "X-Request-Id",
    ])
      expect(listed.headers.get(header)).not.toBeNull();
  });
});

describe("GET /v2/store/orders: pages", () => {
  it("answers the orders ascending by id, with v1's writer but int64s as strings, and nextCursor null on the last page", async () => {
    await seedOrders([
      {
        id: "9223372036854775807",
        petId: "9007199254740993",
        quantity: 2,
        shipDate: "2026-03-01T10:00:00+01:00",
        status: "shipped",
        complete: true,
      },
      { id: 1, petId: 5, status: "pending" },
    ]);
    const { response, body, page: only } = await page("");
    expect(response.headers.get("Content-Type")).toBe("application/json");
    expect(body).toBe(
      '{"data":[{"id":"1","petId":"5","status":"pending","complete":false},' +
        '{"id":"9223372036854775807","petId":"9007199254740993","quantity":2,' +
        '"shipDate":"2026-03-01T09:00:00.000Z","status":"shipped","complete":true}],"nextCursor":null}',
    );
    expect(only.nextCursor).toBeNull();
    expect(response.headers.get("Link")).toBeNull();
  });

  it("links the next page with the same filters and limit (RFC 8288), absolute, until the last", async () => {
    await seedOrders([1, 2, 3, 4, 5].map((id) => ({ id, status: "pending" as const })));
    const first = await page("status=pending&limit=2");
    expect(idsOf(first.body)).toEqual(["1", "2"]);
    const link = first.response.headers.get("Link")!;
    const next = /^<([^>]+)>; rel="next"$/.exec(link)![1]!;
    const url = new URL(next);
    expect(`${url.origin}${url.pathname}`).toBe("http://localhost:8787/v2/store/orders");
    expect(Object.fromEntries(url.searchParams)).toEqual({
      status: "pending",
      limit: "2",
      cursor: first.page.nextCursor,
    });
    const second = await page(url.search.slice(1));
    expect(idsOf(second.body)).toEqual(["3", "4"]);
  });

  it("walks with every filter and page sizes 1, 7 and 1000 to exactly what v1's list filters to", async () => {
    const orders: SeedOrder[] = Array.from({ length: 60 }, (_, i) => ({
      id: i * 3 + 1,
      petId: i % 4,
      status: STATUSES[i % 4]!,
      complete: i % 3 === 0,
      shipDate:
        i % 5 === 0
          ? null
          : `2026-01-${String(1 + (i % 28)).padStart(2, "0")}T${i % 2 === 0 ? "10:00:00Z" : "11:00:00+01:00"}`,
    }));
    await seedOrders(orders);
    const cases: OrderFilters[] = [
      {},
      { status: ["pending"] },
      { status: ["delivered", "shipped"] },
      { petId: "2" },
      { complete: true },
      { status: ["pending", "cancelled"], complete: false },
      { petId: "1", complete: false, status: ["shipped"] },
      { shipDateFrom: "2026-01-05T10:00:00Z", shipDateTo: "2026-01-20T00:00:00+01:00" },
      { shipDateFrom: "2026-01-10T10:00:00Z", status: ["pending", "shipped"] },
    ];
    for (const filters of cases) {
      const expected = await v1Filtered(filters);
      for (const limit of [1, 7, 1000])
        expect(await walk(queryOf(filters), limit), `${queryOf(filters)} limit ${limit}`).toEqual(expected);
    }
  });

  it("compares ship dates as instants: an offset and Z that name one instant are equal, and an order with no ship date never matches", async () => {
    await seedOrders([
      { id: 1, shipDate: "2026-01-01T01:00:00+01:00" },
      { id: 2, shipDate: "2026-01-01T00:00:00Z" },
      { id: 3, shipDate: "2025-12-31T23:59:59.999Z" },
      { id: 4, shipDate: null },
    ]);
    expect(idsOf((await page("shipDateFrom=2026-01-01T00:00:00Z")).body)).toEqual(["1", "2"]);
    expect(idsOf((await page("shipDateTo=2026-01-01T01:00:00%2B01:00")).body)).toEqual(["3"]);
  });

  it("walks every order that exists during the walk exactly once, whatever is inserted, cancelled or shipped between pages", async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(
          fc.record({
            status: fc.constantFrom(...STATUSES),
            petId: fc.integer({ min: 0, max: 3 }),
            complete: fc.boolean(),
          }),
          { minLength: 0, maxLength: 40 },
        ),
        fc.record({
          status: fc.option(fc.subarray([...STATUSES], { minLength: 1 }), { nil: undefined }),
          complete: fc.option(fc.boolean(), { nil: undefined }),
        }),
        fc.integer({ min: 1, max: 9 }),
        fc.array(fc.tuple(fc.constantFrom("insert", "cancel", "ship"), fc.integer({ min: 1, max: 200 })), {
          maxLength: 12,
        }),
        async (rows, chosen, limit, writes) => {
          await clearOrders();
          await seedOrders(rows.map((row, i) => ({ id: i * 5 + 1, ...row })));
          const filters: OrderFilters = {
            ...(chosen.status && { status: [...chosen.status].sort() }),
            ...(chosen.complete !== undefined && { complete: chosen.complete }),
          };
          const before = new Set(await v1Filtered(filters));
          const touched = new Set<string>();
          let step = 0;
          const ids = await walk(queryOf(filters), limit, async () => {
            for (const [kind, n] of writes.slice(step, (step += 2))) {
              const id = String(kind === "insert" ? 1000 + n * 7 + step : (n % Math.max(1, rows.length)) * 5 + 1);
              touched.add(id);
              if (kind === "insert")
                await env.DB.prepare(
                  "INSERT OR IGNORE INTO orders (id, status, complete, created_at, updated_at) VALUES " +
                    "(?1, 'pending', " +
                    "0, 'x', 'x')",
                )
                  .bind(id)
                  .run();
              else
                await env.DB.prepare(`UPDATE orders SET status = ?2 WHERE id = ?1`)
                  .bind(id, kind === "cancel" ? "cancelled" : "shipped")
                  .run();
            }
          });
          expect(new Set(ids).size).toBe(ids.length);
          expect(ids).toEqual([...ids].sort((a, b) => Number(BigInt(a) - BigInt(b))));
          const after = new Set(await v1Filtered(filters));
          // Stable during the walk: matched before and after, and never written meanwhile.
          for (const id of before) if (after.has(id) && !touched.has(id)) expect(ids).toContain(id);
          for (const id of ids) expect(before.has(id) || after.has(id) || touched.has(id)).toBe(true);
        },
      ),
      { numRuns: 40 },
    );
  });
});
