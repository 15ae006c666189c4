import { env } from "cloudflare:workers";
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RANGE_SCAN_FACTOR, pageSql } from "../../../src/orders/pages/page-queries";
import type { OrderFilters } from "../../../src/orders/pages/order-filters";
import { api, errorBodyOf } from "../../support/request";
import { clearOrders, seedManyOrders, seedOrders, type SeedOrder } from "../../support/seed";

interface ListedOrder {
  id: number | string;
  petId?: number | string;
  quantity?: number;
  shipDate?: string;
  status: string;
  complete: boolean;
}
interface Page {
  data: ListedOrder[];
  nextCursor: string | null;
}

const STATUSES = ["pending", "shipped", "delivered", "cancelled"] as const;

/** The ids of a page, which v2 writes as strings of decimal digits (docs/api.md#int64-ids-in-v2). */
const idsOf = (body: string) => [...body.matchAll(/"id":"(-?\d+)"/g)].map((match) => match[1]!);

async function page(query: string, init: RequestInit = {}): Promise<{ response: Response; body: string; page: Page }> {
  const response = await api(`/v2/store/orders${query ? `?${query}` : ""}`, init);
  const body = await response.clone().text();
  return { response, body, page: response.status === 200 ? (JSON.parse(body) as Page) : { data: [], nextCursor: null } };
}

/** Walks every page of `query` with `limit`, calling `between` after each, and returns the ids in order. */
async function walk(query: string, limit: number, between: () => Promise<void> = async () => {}): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 10_000; pages++) {
    const params = new URLSearchParams(query);
    params.set("limit", String(limit));
    if (cursor) params.set("cursor", cursor);
    const { response, body, page: current } = await page(params.toString());
    expect(response.status).toBe(200);
    expect(current.data.length).toBeLessThanOrEqual(limit);
    ids.push(...idsOf(body));
    cursor = current.nextCursor;
    if (cursor === null) return ids;
    await between();
  }
  throw new Error("the walk did not end");
}

/** v1's whole list, filtered in JavaScript the way the v2 filters say: the reference a walk must equal. */
async function v1Filtered(filters: OrderFilters): Promise<string[]> {
  const body = await (await api("/v1/store/orders")).text();
  const orders = JSON.parse(body.replace(/"(id|petId)":(-?\d+)/g, '"$1":"$2"')) as (ListedOrder & { id: string; petId?: string })[];
  const instant = (text: string) => Date.parse(text);
  return orders
    .filter((order) => !filters.status || filters.status.includes(order.status as (typeof STATUSES)[number]))
    .filter((order) => filters.petId === undefined || order.petId === filters.petId)
    .filter((order) => filters.complete === undefined || order.complete === filters.complete)
    .filter((order) => filters.shipDateFrom === undefined || (order.shipDate !== undefined && instant(order.shipDate) >= instant(filters.shipDateFrom)))
    .filter((order) => filters.shipDateTo === undefined || (order.shipDate !== undefined && instant(order.shipDate) < instant(filters.shipDateTo)))
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
    ["an unknown status", "status=pending,lost", /status must be one or more of pending, shipped, delivered, cancelled/],
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
      expect(await errorBodyOf((await page(`cursor=${cursor}`)).response)).toMatchObject({ code: "invalid_cursor", status: 400 });
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
    for (const header of ["X-RateLimit-Limit", "X-RateLimit-Remaining", "RateLimit", "RateLimit-Policy", "X-Request-Id"]) expect(listed.headers.get(header)).not.toBeNull();
  });
});

describe("GET /v2/store/orders: pages", () => {
  it("answers the orders ascending by id, with v1's writer but int64s as strings, and nextCursor null on the last page", async () => {
    await seedOrders([
      { id: "9223372036854775807", petId: "9007199254740993", quantity: 2, shipDate: "2026-03-01T10:00:00+01:00", status: "shipped", complete: true },
      { id: 1, petId: 5, status: "pending" },
    ]);
    const { response, body, page: only } = await page("");
    expect(response.headers.get("Content-Type")).toBe("application/json");
    expect(body).toBe(
      '{"data":[{"id":"1","petId":"5","status":"pending","complete":false},' +
        '{"id":"9223372036854775807","petId":"9007199254740993","quantity":2,"shipDate":"2026-03-01T09:00:00.000Z","status":"shipped","complete":true}],"nextCursor":null}',
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
    expect(Object.fromEntries(url.searchParams)).toEqual({ status: "pending", limit: "2", cursor: first.page.nextCursor });
    const second = await page(url.search.slice(1));
    expect(idsOf(second.body)).toEqual(["3", "4"]);
  });

  it("walks with every filter and page sizes 1, 7 and 1000 to exactly what v1's list filters to", async () => {
    const orders: SeedOrder[] = Array.from({ length: 60 }, (_, i) => ({
      id: i * 3 + 1,
      petId: i % 4,
      status: STATUSES[i % 4]!,
      complete: i % 3 === 0,
      shipDate: i % 5 === 0 ? null : `2026-01-${String(1 + (i % 28)).padStart(2, "0")}T${i % 2 === 0 ? "10:00:00Z" : "11:00:00+01:00"}`,
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
      for (const limit of [1, 7, 1000]) expect(await walk(queryOf(filters), limit), `${queryOf(filters)} limit ${limit}`).toEqual(expected);
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
        fc.array(fc.record({ status: fc.constantFrom(...STATUSES), petId: fc.integer({ min: 0, max: 3 }), complete: fc.boolean() }), { minLength: 0, maxLength: 40 }),
        fc.record({ status: fc.option(fc.subarray([...STATUSES], { minLength: 1 }), { nil: undefined }), complete: fc.option(fc.boolean(), { nil: undefined }) }),
        fc.integer({ min: 1, max: 9 }),
        fc.array(fc.tuple(fc.constantFrom("insert", "cancel", "ship"), fc.integer({ min: 1, max: 200 })), { maxLength: 12 }),
        async (rows, chosen, limit, writes) => {
          await clearOrders();
          await seedOrders(rows.map((row, i) => ({ id: i * 5 + 1, ...row })));
          const filters: OrderFilters = { ...(chosen.status && { status: [...chosen.status].sort() }), ...(chosen.complete !== undefined && { complete: chosen.complete }) };
          const before = new Set(await v1Filtered(filters));
          const touched = new Set<string>();
          let step = 0;
          const ids = await walk(queryOf(filters), limit, async () => {
            for (const [kind, n] of writes.slice(step, (step += 2))) {
              const id = String(kind === "insert" ? 1000 + n * 7 + step : (n % Math.max(1, rows.length)) * 5 + 1);
              touched.add(id);
              if (kind === "insert") await env.DB.prepare("INSERT OR IGNORE INTO orders (id, status, complete, created_at, updated_at) VALUES (?1, 'pending', 0, 'x', 'x')").bind(id).run();
              else await env.DB.prepare(`UPDATE orders SET status = ?2 WHERE id = ?1`).bind(id, kind === "cancel" ? "cancelled" : "shipped").run();
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

describe("GET /v2/store/orders: what a page reads", () => {
  /** D1's count of rows a page's statement reads, and its query plan. */
  async function cost(filters: OrderFilters, limit: number, after?: string): Promise<{ rowsRead: number; plan: string }> {
    const { sql, values } = pageSql(filters, after, limit + 1);
    const rowsRead = (await env.DB.prepare(sql).bind(...values).all()).meta.rows_read;
    const plan = (await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`).bind(...values).all<{ detail: string }>()).results.map((row) => row.detail);
    return { rowsRead, plan: plan.join("; ") };
  }

  // One status: a page and one more row. Several: each status's arm reads at most that, and their merge that again.
  // And the list's version, read by the same statement.
  const pageReads = (arms: number) => (arms === 1 ? 101 : (arms + 1) * 101) + 2 + 1;

  it("reads about a page's rows through an index for no filter, each equality filter and every combination, whatever the table's size", async () => {
    await seedManyOrders(20_000);
    await env.DB.prepare("UPDATE orders SET complete = (id % 3 = 0), pet_id = id % 7").run();
    const cases: [OrderFilters, number][] = [
      [{}, 1],
      [{ status: ["pending"] }, 1],
      [{ petId: "3" }, 1],
      [{ complete: true }, 1],
      [{ status: ["pending"], petId: "3" }, 1],
      [{ status: ["shipped"], complete: false }, 1],
      [{ petId: "5", complete: true }, 1],
      [{ status: ["delivered"], petId: "2", complete: true }, 1],
      [{ status: ["pending", "shipped", "cancelled"] }, 3],
      [{ status: ["pending", "delivered"], petId: "1", complete: false }, 2],
    ];
    for (const [filters, arms] of cases) {
      for (const after of [undefined, "10000"]) {
        const { rowsRead, plan } = await cost(filters, 100, after);
        expect(rowsRead, `${JSON.stringify(filters)} after ${after}: ${plan}`).toBeLessThanOrEqual(pageReads(arms));
        expect(plan, JSON.stringify(filters)).not.toMatch(/SCAN orders(?! USING)/);
        // A single arm is read in id order from its index; several arms sort at most a page each to merge.
        if (arms === 1) expect(plan).not.toMatch(/TEMP B-TREE/);
      }
    }
  });

  it("reads a bounded multiple of a page's rows with a ship date range, however wide or sparse the range, with or without other filters", async () => {
    await seedManyOrders(20_000);
    await env.DB.prepare("UPDATE orders SET ship_date = strftime('%Y-%m-%dT%H:%M:%SZ', '2026-01-01', '+' || id || ' minutes'), pet_id = id % 7").run();
    const everything = { shipDateFrom: "0000-01-01T00:00:00Z" };
    const nothing = { shipDateFrom: "2030-01-01T00:00:00Z" };
    const cases: [OrderFilters, number][] = [
      [everything, 1],
      [nothing, 1],
      [{ ...everything, status: ["pending"] }, 1],
      [{ ...nothing, status: ["pending"], petId: "3" }, 1],
      [{ shipDateFrom: "2026-01-05T00:00:00Z", shipDateTo: "2026-01-06T00:00:00Z", status: ["pending", "shipped", "cancelled"] }, 3],
    ];
    for (const [filters, arms] of cases) {
      for (const after of [undefined, "10000"]) {
        const { rowsRead, plan } = await cost(filters, 100, after);
        // Per arm: its frontier, found once (at most RANGE_SCAN_FACTOR index entries per row asked for), and the
        // page's read up to it, each read twice as D1 counts it (the subquery, then its materialised rows); and
        // the merge. Never the table, and never the frontier twice (it was, in a statement of its own).
        const bound = arms * 2 * RANGE_SCAN_FACTOR * 101 + (arms > 1 ? arms * 101 : 0) + 2 * (arms + 1) + 4;
        expect(rowsRead, `${JSON.stringify(filters)} after ${after}: ${plan}`).toBeLessThanOrEqual(bound);
        expect(plan, JSON.stringify(filters)).not.toMatch(/SCAN orders(?! USING)/);
        // One arm's page is read as it streams out of its index: never copied, never sorted again.
        if (arms === 1) expect(plan, JSON.stringify(filters)).not.toMatch(/TEMP B-TREE|MATERIALIZE (?!frontier)/);
      }
    }
  });

  it("goes on past a stretch with nothing in the range: short pages, each with where to go on from, until the list ends", async () => {
    await seedManyOrders(3_000);
    // Only the last 10 orders ship in January: every page before them scans without finding any.
    await env.DB.prepare("UPDATE orders SET ship_date = CASE WHEN id > 2990 THEN '2026-01-15T00:00:00Z' ELSE '2025-06-01T00:00:00Z' END").run();
    let pages = 1;
    const ids = await walk("shipDateFrom=2026-01-01T00:00:00Z", 100, async () => void (pages += 1));
    expect(ids).toEqual(Array.from({ length: 10 }, (_, i) => String(2991 + i)));
    // Each page scans at most RANGE_SCAN_FACTOR × 101 orders: 3,000 orders take a bounded number of pages, all but the last empty.
    expect(pages).toBeGreaterThan(1);
    expect(pages).toBeLessThanOrEqual(Math.ceil(3_000 / (RANGE_SCAN_FACTOR * 101)) + 1);
  });
});

describe("GET /v2/store/orders: revalidation and bookmarks", () => {
  it("gives each page an ETag and answers 304 to it until the list changes", async () => {
    await seedOrders([1, 2, 3].map((id) => ({ id })));
    const first = await page("limit=2");
    const etag = first.response.headers.get("ETag")!;
    expect(etag).toMatch(/^"orders-.+"$/);
    const again = await api("/v2/store/orders?limit=2", { headers: { "If-None-Match": etag } });
    expect(again.status).toBe(304);
    expect(await again.text()).toBe("");
    expect(again.headers.get("ETag")).toBe(etag);
    // Another page, another tag.
    expect((await page("limit=1")).response.headers.get("ETag")).not.toBe(etag);
    await env.DB.prepare("UPDATE orders SET status = 'shipped' WHERE id = 1").run();
    expect((await api("/v2/store/orders?limit=2", { headers: { "If-None-Match": etag } })).status).toBe(200);
  });

  it("sends X-D1-Bookmark and honours it, refusing a malformed one", async () => {
    await seedOrders([{ id: 1 }]);
    const cancelled = await api("/v2/store/orders/1", { method: "DELETE" });
    expect(cancelled.status).toBe(204);
    const bookmark = cancelled.headers.get("X-D1-Bookmark")!;
    const listed = await page("status=cancelled", { headers: { "X-D1-Bookmark": bookmark } });
    expect(idsOf(listed.body)).toEqual(["1"]);
    expect(listed.response.headers.get("X-D1-Bookmark")).toMatch(/^[0-9a-f-]+$/);
    expect(await errorBodyOf((await page("", { headers: { "X-D1-Bookmark": "nope" } })).response)).toMatchObject({ code: "invalid_bookmark" });
  });
});

describe("/v2/store/orders/{orderId}", () => {
  it("GET answers the order with an ETag, 304 to it, 404 for none and 400 for a bad id", async () => {
    await seedOrders([{ id: "9223372036854775807", petId: 1, status: "pending" }]);
    const response = await api("/v2/store/orders/9223372036854775807");
    expect(await response.text()).toBe('{"id":"9223372036854775807","petId":"1","status":"pending","complete":false}');
    const etag = response.headers.get("ETag")!;
    expect((await api("/v2/store/orders/9223372036854775807", { headers: { "If-None-Match": etag } })).status).toBe(304);
    expect(await errorBodyOf(await api("/v2/store/orders/42"))).toMatchObject({ code: "order_not_found", status: 404 });
    expect(await errorBodyOf(await api("/v2/store/orders/abc"))).toMatchObject({ code: "invalid_order_id", status: 400 });
  });

  it("DELETE is v1's cancel: 204 twice, 409 for shipped, 404, 400", async () => {
    await seedOrders([{ id: 1 }, { id: 2, status: "shipped" }]);
    expect((await api("/v2/store/orders/1", { method: "DELETE" })).status).toBe(204);
    expect((await api("/v2/store/orders/1", { method: "DELETE" })).status).toBe(204);
    expect(await errorBodyOf(await api("/v2/store/orders/2", { method: "DELETE" }))).toMatchObject({ code: "order_already_shipped", status: 409 });
    expect(await errorBodyOf(await api("/v2/store/orders/3", { method: "DELETE" }))).toMatchObject({ code: "order_not_found" });
    expect(await errorBodyOf(await api("/v2/store/orders/1.5", { method: "DELETE" }))).toMatchObject({ code: "invalid_order_id" });
    const wrong = await api("/v2/store/orders/1", { method: "PUT" });
    expect(wrong.headers.get("Allow")).toBe("GET, DELETE, HEAD, OPTIONS");
  });

  it("has no pets, and a version it does not have is unsupported", async () => {
    expect(await errorBodyOf(await api("/v2/pets/1"))).toMatchObject({ code: "not_found", status: 404 });
    expect(await errorBodyOf(await api("/v3/store/orders"))).toMatchObject({ code: "unsupported_version", status: 404 });
  });
});

describe("the v2 document and GET /", () => {
  it("serves v2's own OpenAPI 3.1 document: version 2.0.0, its servers under /v2 (this deployment's first), every operation beta", async () => {
    const response = await api("/v2/openapi.json", { key: null });
    const document = (await response.json()) as {
      openapi: string;
      info: { version: string };
      servers: { url: string }[];
      paths: Record<string, Record<string, { operationId: string; "x-stability": string; parameters: { name: string; in: string }[] }>>;
    };
    expect(document.openapi).toBe("3.1.0");
    expect(document.info.version).toBe("2.0.0");
    expect(document.servers[0]!.url).toBe("http://localhost:8787/v2");
    for (const server of document.servers) expect(server.url).toMatch(/\/v2$/);
    const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
    expect(operations.map((operation) => operation.operationId).sort()).toEqual(["cancelOrderV2", "createWebhookEndpoint", "deleteWebhookEndpoint", "getOpenApiDocument", "getOrderV2", "getUsage", "getWebhookEndpoint", "listOrderEvents", "listOrdersV2", "listWebhookDeliveries", "listWebhookEndpoints", "retryWebhookDelivery"]);
    for (const operation of operations) expect(operation["x-stability"]).toBe("beta");
    expect(document.paths["/store/orders"]!.get!.parameters.filter((parameter) => parameter.in === "query").map((parameter) => parameter.name)).toEqual([
      "status",
      "petId",
      "complete",
      "shipDateFrom",
      "shipDateTo",
      "limit",
      "cursor",
    ]);
    // What a cursor can be, so a third-party fuzzer or client never sends an empty or non-ASCII one as valid.
    const cursor = document.paths["/store/orders"]!.get!.parameters.find((parameter) => parameter.name === "cursor") as unknown as { schema: Record<string, unknown> };
    expect(cursor.schema).toEqual({ type: "string", minLength: 1, maxLength: 200, pattern: "^[A-Za-z0-9_-]{1,200}$" });
    expect(Object.keys(document.paths)).not.toContain("/pets/{petId}");
  });

  it("says every int64 is a string of decimal digits (format int64, with the pattern), in bodies and parameters; Error.code is open", async () => {
    const document = (await (await api("/v2/openapi.json", { key: null })).json()) as {
      paths: Record<string, Record<string, { parameters: { name: string; in: string; schema: Record<string, unknown> }[] }>>;
      components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> };
    };
    const int64 = { type: "string", format: "int64", pattern: "^-?(0|[1-9][0-9]*)$" };
    const { Order, OrderEventPrevious, Error } = document.components.schemas;
    for (const schema of [Order!.properties.id, Order!.properties.petId]) expect(schema).toMatchObject(int64);
    for (const schema of [OrderEventPrevious!.properties.id, OrderEventPrevious!.properties.petId]) expect(schema!.anyOf).toContainEqual(expect.objectContaining(int64));
    const parameter = (path: string, method: string, name: string) => document.paths[path]![method]!.parameters.find((p) => p.name === name)!.schema;
    for (const method of ["get", "delete"]) expect(parameter("/store/orders/{orderId}", method, "orderId")).toMatchObject(int64);
    expect(parameter("/store/orders", "get", "petId")).toEqual(int64);
    expect(JSON.stringify(document)).not.toMatch(/"type":"integer","format":"int64"/);
    expect(Error!.properties.code).toMatchObject({ type: "string", examples: expect.arrayContaining(["order_not_found", "invalid_order_id"]) });
    // Neither the Error schema nor an operation's error responses close the list of codes.
    expect(JSON.stringify(document)).not.toMatch(/"code":\{[^{}]*"enum"/);
  });

  it("lists both versions at GET /, each with its document and reference page", async () => {
    const described = (await (await api("/", { key: null })).json()) as { versions: { version: string; document: string; reference: string }[] };
    expect(described.versions).toEqual([
      { version: "1.0.0", baseUrl: "http://localhost:8787/v1", document: "http://localhost:8787/v1/openapi.json", reference: "http://localhost:8787/v1/docs" },
      { version: "2.0.0", baseUrl: "http://localhost:8787/v2", document: "http://localhost:8787/v2/openapi.json", reference: "http://localhost:8787/v2/docs" },
    ]);
    const page = await api("/v2/docs", { key: null });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('data-url="/v2/openapi.json"');
  });
});
