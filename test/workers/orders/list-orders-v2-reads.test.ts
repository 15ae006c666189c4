import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { RANGE_SCAN_FACTOR, pageSql } from "../../../src/orders/pages/page-queries";
import type { OrderFilters } from "../../../src/orders/pages/order-filters";
import { api, errorBodyOf } from "../../support/request";
import { clearOrders, seedManyOrders, seedOrders } from "../../support/seed";
import { idsOf, page, walk } from "../../support/v2-pages";

/** v2's reads: what a page costs D1, revalidation and bookmarks, one order by id, the document and GET /. */

beforeEach(clearOrders);
afterEach(() => vi.restoreAllMocks());

describe("GET /v2/store/orders: what a page reads", () => {
  /** D1's count of rows a page's statement reads, and its query plan. */
  async function cost(
    filters: OrderFilters,
    limit: number,
    after?: string,
  ): Promise<{ rowsRead: number; plan: string }> {
    const { sql, values } = pageSql(filters, after, limit + 1);
    const rowsRead = (
      await env.DB.prepare(sql)
        .bind(...values)
        .all()
    ).meta.rows_read;
    const plan = (
      await env.DB.prepare(`EXPLAIN QUERY PLAN ${sql}`)
        .bind(...values)
        .all<{ detail: string }>()
    ).results.map((row) => row.detail);
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
    await env.DB.prepare(
      "UPDATE orders SET ship_date = strftime('%Y-%m-%dT%H:%M:%SZ', '2026-01-01', '+' || id || ' minutes'), pet_id = " +
        "id % 7",
    ).run();
    const everything = { shipDateFrom: "0000-01-01T00:00:00Z" };
    const nothing = { shipDateFrom: "2030-01-01T00:00:00Z" };
    const cases: [OrderFilters, number][] = [
      [everything, 1],
      [nothing, 1],
      [{ ...everything, status: ["pending"] }, 1],
      [{ ...nothing, status: ["pending"], petId: "3" }, 1],
      [
        {
          shipDateFrom: "2026-01-05T00:00:00Z",
          shipDateTo: "2026-01-06T00:00:00Z",
          status: ["pending", "shipped", "cancelled"],
        },
        3,
      ],
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
    await env.DB.prepare(
      "UPDATE orders SET ship_date = CASE WHEN id > 2990 THEN '2026-01-15T00:00:00Z' ELSE '2025-06-01T00:00:00Z' END",
    ).run();
    let pages = 1;
    const ids = await walk("shipDateFrom=2026-01-01T00:00:00Z", 100, async () => void (pages += 1));
    expect(ids).toEqual(Array.from({ length: 10 }, (_, i) => String(2991 + i)));
    // Each page scans at most RANGE_SCAN_FACTOR × 101 orders: 3,000 orders take a bounded number of pages, all but the
    // last empty.
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
    expect(await errorBodyOf((await page("", { headers: { "X-D1-Bookmark": "nope" } })).response)).toMatchObject({
      code: "invalid_bookmark",
    });
  });
});

describe("/v2/store/orders/{orderId}", () => {
  it("GET answers the order with an ETag, 304 to it, 404 for none and 400 for a bad id", async () => {
    await seedOrders([{ id: "9223372036854775807", petId: 1, status: "pending" }]);
    const response = await api("/v2/store/orders/9223372036854775807");
    expect(await response.text()).toBe('{"id":"9223372036854775807","petId":"1","status":"pending","complete":false}');
    const etag = response.headers.get("ETag")!;
    expect((await api("/v2/store/orders/9223372036854775807", { headers: { "If-None-Match": etag } })).status).toBe(
      304,
    );
    expect(await errorBodyOf(await api("/v2/store/orders/42"))).toMatchObject({ code: "order_not_found", status: 404 });
    expect(await errorBodyOf(await api("/v2/store/orders/abc"))).toMatchObject({
      code: "invalid_order_id",
      status: 400,
    });
  });

  it("DELETE is v1's cancel: 204 twice, 409 for shipped, 404, 400", async () => {
    await seedOrders([{ id: 1 }, { id: 2, status: "shipped" }]);
    expect((await api("/v2/store/orders/1", { method: "DELETE" })).status).toBe(204);
    expect((await api("/v2/store/orders/1", { method: "DELETE" })).status).toBe(204);
    expect(await errorBodyOf(await api("/v2/store/orders/2", { method: "DELETE" }))).toMatchObject({
      code: "order_already_shipped",
      status: 409,
    });
    expect(await errorBodyOf(await api("/v2/store/orders/3", { method: "DELETE" }))).toMatchObject({
      code: "order_not_found",
    });
    expect(await errorBodyOf(await api("/v2/store/orders/1.5", { method: "DELETE" }))).toMatchObject({
      code: "invalid_order_id",
    });
    const wrong = await api("/v2/store/orders/1", { method: "PUT" });
    expect(wrong.headers.get("Allow")).toBe("GET, DELETE, HEAD, OPTIONS");
  });

  it("has no pets, and a version it does not have is unsupported", async () => {
    expect(await errorBodyOf(await api("/v2/pets/1"))).toMatchObject({ code: "not_found", status: 404 });
    expect(await errorBodyOf(await api("/v3/store/orders"))).toMatchObject({
      code: "unsupported_version",
      status: 404,
    });
  });
});

describe("the v2 document and GET /", () => {
  it("serves v2's own OpenAPI 3.1 document: version 2.0.0, its servers under /v2 (this deployment's first), every operation beta", async () => {
    const response = await api("/v2/openapi.json", { key: null });
    const document = (await response.json()) as {
      openapi: string;
      info: { version: string };
      servers: { url: string }[];
      paths: Record<
        string,
        Record<string, { operationId: string; "x-stability": string; parameters: { name: string; in: string }[] }>
      >;
    };
    expect(document.openapi).toBe("3.1.0");
    expect(document.info.version).toBe("2.0.0");
    expect(document.servers[0]!.url).toBe("http://localhost:8787/v2");
    for (const server of document.servers) expect(server.url).toMatch(/\/v2$/);
    const operations = Object.values(document.paths).flatMap((methods) => Object.values(methods));
    expect(operations.map((operation) => operation.operationId).sort()).toEqual([
      "cancelOrderV2",
      "createWebhookEndpoint",
      "deleteWebhookEndpoint",
      "endConsoleSession",
      "getConsoleSession",
      "getOpenApiDocument",
      "getOrderV2",
      "getUsage",
      "getWebhookEndpoint",
      "listOrderEvents",
      "listOrdersV2",
      "listOwnKeys",
      "listWebhookDeliveries",
      "listWebhookEndpoints",
      "openConsoleSession",
      "recoverWebhookDeliveries",
      "redeemConsoleLink",
      "retryWebhookDelivery",
      "revokeOwnKey",
      "rotateOwnKey",
      "rotateWebhookSecret",
      "sendWebhookTestEvent",
      "updateWebhookEndpoint",
    ]);
    for (const operation of operations) expect(operation["x-stability"]).toBe("beta");
    expect(
      document.paths["/store/orders"]!.get!.parameters.filter((parameter) => parameter.in === "query").map(
        (parameter) => parameter.name,
      ),
    ).toEqual(["status", "petId", "complete", "shipDateFrom", "shipDateTo", "limit", "cursor"]);
    // What a cursor can be, so a third-party fuzzer or client never sends an empty or non-ASCII one as valid.
    const cursor = document.paths["/store/orders"]!.get!.parameters.find(
      (parameter) => parameter.name === "cursor",
    ) as unknown as { schema: Record<string, unknown> };
    expect(cursor.schema).toEqual({ type: "string", minLength: 1, maxLength: 200, pattern: "^[A-Za-z0-9_-]{1,200}$" });
    expect(Object.keys(document.paths)).not.toContain("/pets/{petId}");
  });

  it("says every int64 is a string of decimal digits (format int64, with the pattern), in bodies and parameters; Error.code is open", async () => {
    const document = (await (await api("/v2/openapi.json", { key: null })).json()) as {
      paths: Record<
        string,
        Record<string, { parameters: { name: string; in: string; schema: Record<string, unknown> }[] }>
      >;
      components: { schemas: Record<string, { properties: Record<string, Record<string, unknown>> }> };
    };
    const int64 = { type: "string", format: "int64", pattern: "^-?(0|[1-9][0-9]*)$" };
    const { Order, OrderEventPrevious, Error: errorSchema } = document.components.schemas;
    for (const schema of [Order!.properties.id, Order!.properties.petId]) expect(schema).toMatchObject(int64);
    for (const schema of [OrderEventPrevious!.properties.id, OrderEventPrevious!.properties.petId])
      expect(schema!.anyOf).toContainEqual(expect.objectContaining(int64));
    const parameter = (path: string, method: string, name: string) =>
      document.paths[path]![method]!.parameters.find((p) => p.name === name)!.schema;
    for (const method of ["get", "delete"])
      expect(parameter("/store/orders/{orderId}", method, "orderId")).toMatchObject(int64);
    expect(parameter("/store/orders", "get", "petId")).toEqual(int64);
    expect(JSON.stringify(document)).not.toMatch(/"type":"integer","format":"int64"/);
    expect(errorSchema!.properties.code).toMatchObject({
      type: "string",
      examples: expect.arrayContaining(["order_not_found", "invalid_order_id"]),
    });
    // Neither the Error schema nor an operation's error responses close the list of codes.
    expect(JSON.stringify(document)).not.toMatch(/"code":\{[^{}]*"enum"/);
  });

  it("lists both versions at GET /, each with its document and reference page", async () => {
    const described = (await (await api("/", { key: null })).json()) as {
      versions: { version: string; document: string; reference: string }[];
    };
    expect(described.versions).toEqual([
      {
        version: "1.0.0",
        baseUrl: "http://localhost:8787/v1",
        document: "http://localhost:8787/v1/openapi.json",
        reference: "http://localhost:8787/v1/docs",
      },
      {
        version: "2.0.0",
        baseUrl: "http://localhost:8787/v2",
        document: "http://localhost:8787/v2/openapi.json",
        reference: "http://localhost:8787/v2/docs",
      },
    ]);
    const page = await api("/v2/docs", { key: null });
    expect(page.status).toBe(200);
    expect(await page.text()).toContain('data-url="/v2/openapi.json"');
  });
});
