import { env } from "cloudflare:workers";
import { afterEach, beforeEach, describe, expect, it, type MockInstance, vi } from "vitest";
import { BOOKMARK_HEADER } from "../../../src/lib/bookmark";
import {
  ORDER_LIST_CACHE_NAME,
  cachedOrderList,
  orderListCacheKey,
} from "../../../src/orders/whole-list/order-list-cache";
import { reusableVersion } from "../../../src/read-your-writes/recent-version";
import { api, apiWith, errorBodyOf } from "../../support/request";
import { countingD1, failingReads, interceptD1 } from "../../support/faults";
import { clearOrders, seedManyOrders, seedOrders } from "../../support/seed";

/**
 * Cache writes (and the deletes after them) run after the response (waitUntil), once the body has been read: this waits
 * for those started so far.
 */
const putForReal = Cache.prototype.put;
let cacheWrites: MockInstance<Cache["put"]>;
let cacheDeletes: MockInstance<Cache["delete"]>;
beforeEach(async () => {
  cacheWrites = vi.spyOn(Cache.prototype, "put");
  cacheDeletes = vi.spyOn(Cache.prototype, "delete");
  await clearOrders();
});
const cacheWritesSettled = async () => {
  await Promise.allSettled(cacheWrites.mock.results.map((result) => result.value));
  // A delete follows a put that must not stay; give it its turn, then wait for it.
  await scheduler.wait(50);
  await Promise.allSettled(cacheDeletes.mock.results.map((result) => result.value));
};

/** The cached body of the version a response's ETag names, once the cache writes have settled. */
async function cachedBodyOf(response: Response): Promise<string | undefined> {
  await cacheWritesSettled();
  const version = response.headers.get("ETag")!.slice('"orders-'.length, -1);
  const cached = await cachedOrderList(env.BASE_URL, version, { background: () => {}, onError: () => {} });
  if (!cached) return undefined;
  const text = await new Response(cached.body).text();
  // Its marker says its size: the analytics point of a list served from the cache reports it.
  expect(cached.bytes).toBe(new TextEncoder().encode(text).byteLength);
  return text;
}

const LIST = "/v1/store/orders";

/** A list through D1 that counts its queries, with the vars of the test's choosing. */
async function countedList(vars: Partial<Record<string, string>> = {}, init: RequestInit = {}) {
  const d1 = countingD1();
  const response = await apiWith({ ...env, ...vars, DB: d1.db } as Env, LIST, init);
  const body = init.method === "HEAD" ? "" : await response.text();
  return { response, body, queries: d1.queries() };
}

describe("the order list from the cache", () => {
  it("serves an unchanged version byte for byte from the cache, with the same ETag, for one version read", async () => {
    await seedManyOrders(2_500);
    const miss = await countedList();
    expect(await cachedBodyOf(miss.response)).toBe(miss.body);
    const hit = await countedList();
    expect(hit.response.status).toBe(200);
    expect(hit.body).toBe(miss.body);
    expect(hit.response.headers.get("ETag")).toBe(miss.response.headers.get("ETag"));
    expect(hit.response.headers.get("Content-Type")).toBe("application/json");
    expect(JSON.parse(hit.body)).toHaveLength(2_500);
    // The miss: version, then version + first page + page ends, two later pages, and the check at the end.
    expect(miss.queries).toBe(7);
    expect(hit.queries).toBe(1);
  });

  it("answers a new version after a cancel, and after another system's insert", async () => {
    await seedOrders([{ id: 1 }, { id: 2 }]);
    const before = await api(LIST);
    await before.text();
    expect((await api(`${LIST}/1`, { method: "DELETE" })).status).toBe(204);
    const afterCancel = await api(LIST);
    expect(afterCancel.headers.get("ETag")).not.toBe(before.headers.get("ETag"));
    expect(await afterCancel.json()).toEqual([
      expect.objectContaining({ id: 1, status: "cancelled" }),
      expect.objectContaining({ id: 2, status: "pending" }),
    ]);

    await seedOrders([{ id: 3 }]);
    const afterInsert = await api(LIST);
    expect((await afterInsert.json<{ id: number }[]>()).map((order) => order.id)).toEqual([1, 2, 3]);
  });

  it("reads the client's own cancel with its bookmark, cache or not", async () => {
    await seedOrders([{ id: 7 }]);
    await (await api(LIST)).text();
    const cancel = await api(`${LIST}/7`, { method: "DELETE" });
    const list = await api(LIST, { headers: { [BOOKMARK_HEADER]: cancel.headers.get(BOOKMARK_HEADER)! } });
    expect(await list.json()).toEqual([expect.objectContaining({ id: 7, status: "cancelled" })]);
  });

  it("stores nothing when D1 fails part-way through the list", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    await seedManyOrders(1_500);
    const failed = await apiWith({ ...env, DB: failingReads() }, LIST);
    await expect(failed.text()).rejects.toThrow();
    expect(await cachedBodyOf(failed)).toBeUndefined();
    const next = await countedList();
    expect(JSON.parse(next.body)).toHaveLength(1_500);
    expect(next.queries).toBeGreaterThan(1);
    errors.mockRestore();
  });

  it("keeps nothing when the client goes away part-way through the list, and the next list is whole", async () => {
    await seedManyOrders(3_000);
    const gone = await api(LIST);
    const reader = gone.body!.getReader();
    const { value } = await reader.read();
    expect(new TextDecoder().decode(value).startsWith("[")).toBe(true);
    await reader.cancel("client went away");
    expect(await cachedBodyOf(gone)).toBeUndefined();
    const next = await countedList();
    expect(JSON.parse(next.body)).toHaveLength(3_000);
    expect(await cachedBodyOf(next.response)).toBe(next.body);
  });

  it("keeps no marker when storing the body fails though the client had it whole: the next list is whole, from D1", async () => {
    const warnings = vi.spyOn(console, "warn").mockImplementation(() => {});
    await seedManyOrders(1_500);
    // What a runtime may leave of an upload that failed: its first part, under the version.
    cacheWrites.mockImplementationOnce(async function (this: Cache, request, response) {
      const part = (await response.text()).slice(0, 40_000);
      await putForReal.call(this, request, new Response(part, { headers: { "Cache-Control": "max-age=600" } }));
      throw new Error("the cache failed while storing the list");
    });
    const first = await countedList();
    expect(JSON.parse(first.body)).toHaveLength(1_500);
    expect(await cachedBodyOf(first.response)).toBeUndefined();
    const next = await countedList();
    expect(next.body).toBe(first.body);
    expect(next.queries).toBeGreaterThan(1);
    expect(warnings.mock.calls.map(([line]) => JSON.parse(String(line)).message)).toContain(
      "order list cache: the list was not stored",
    );
    warnings.mockRestore();
  });

  it("never serves a body the cache holds without its marker (a cut-short upload): the list comes from D1, whole, and is stored again", async () => {
    await seedManyOrders(1_500);
    const whole = await countedList();
    const version = whole.response.headers.get("ETag")!.slice('"orders-'.length, -1);
    await cacheWritesSettled();
    // What a runtime that stores an aborted upload leaves behind: the first part of the list, under its version and a
    // fill of its own, and no marker; the whole fill and its marker have gone (the cache may let any entry go).
    const cache = await caches.open(ORDER_LIST_CACHE_NAME);
    const base = orderListCacheKey(env.BASE_URL, version).url;
    const marker = await cache.match(new Request(`${base}&whole=1`));
    await cache.delete(new Request(`${base}&fill=${marker!.headers.get("X-Body-Fill")}`));
    await cache.delete(new Request(`${base}&whole=1`));
    const part = new Response(whole.body.slice(0, 40_000), { headers: { "Cache-Control": "max-age=600" } });
    await cache.put(new Request(`${base}&fill=${crypto.randomUUID()}`), part.clone());
    await cache.put(new Request(base), part);
    const served = await countedList();
    expect(served.body).toBe(whole.body);
    expect(served.queries).toBeGreaterThan(1);
    expect(await cachedBodyOf(served.response)).toBe(whole.body);
  });

  it("keeps serving a stored whole list when a cut-short upload of the same version lands after it", async () => {
    await seedManyOrders(1_500);
    const whole = await countedList();
    const version = whole.response.headers.get("ETag")!.slice('"orders-'.length, -1);
    expect(await cachedBodyOf(whole.response)).toBe(whole.body);
    // What a client gone away mid-list leaves, seconds later, once its request is torn down: the first part, under the
    // version.
    const cache = await caches.open(ORDER_LIST_CACHE_NAME);
    await cache.put(
      orderListCacheKey(env.BASE_URL, version),
      new Response(whole.body.slice(0, 40_000), { headers: { "Cache-Control": "max-age=600" } }),
    );
    const served = await countedList();
    expect(served.body).toBe(whole.body);
    expect(served.queries).toBe(1);
  });

  it("serves a hit in one cache lookup once this isolate knows the version's whole fill, and reads the marker again once the body is gone", async () => {
    await seedManyOrders(1_500);
    const whole = await countedList();
    const version = whole.response.headers.get("ETag")!.slice('"orders-'.length, -1);
    await cacheWritesSettled();
    const lookups = vi.spyOn(Cache.prototype, "match");
    try {
      // This isolate stored the fill and its marker: it knows the fill, so the body is the one lookup.
      const hit = await countedList();
      expect(hit.body).toBe(whole.body);
      expect(lookups.mock.calls.map(([request]) => new URL((request as Request).url).searchParams.has("fill"))).toEqual(
        [true],
      );
      expect(hit.queries).toBe(1);

      // The cache let the body go: the known fill is a miss, the marker is read, and the list comes from D1, whole.
      const cache = await caches.open(ORDER_LIST_CACHE_NAME);
      expect(await cache.delete(lookups.mock.calls[0]![0] as Request)).toBe(true);
      lookups.mockClear();
      const refilled = await countedList();
      expect(refilled.body).toBe(whole.body);
      expect(refilled.queries).toBeGreaterThan(1);
      // The known fill, then the marker, which still names the body that is gone.
      expect(
        lookups.mock.calls.map(([request]) => new URL((request as Request).url).searchParams.has("whole")),
      ).toEqual([false, true, false]);
      expect(refilled.response.headers.get("ETag")).toBe(`"orders-${version}"`);
      expect(await cachedBodyOf(refilled.response)).toBe(whole.body);
    } finally {
      lookups.mockRestore();
    }
  });

  it("stores nothing when the table changed while the list was read, and the next list has the change", async () => {
    await seedManyOrders(1_500);
    let wrote = false;
    const writeDuringList = interceptD1({
      prepare: (statement, sql) =>
        sql.includes("orders.id > ?1")
          ? new Proxy(statement, {
              get(target, property) {
                if (property === "bind") {
                  return (...values: unknown[]) => {
                    const bound = target.bind(...values);
                    return {
                      raw: async () => {
                        if (!wrote) {
                          wrote = true;
                          await env.DB.prepare("UPDATE orders SET status = 'shipped' WHERE id = 1").run();
                        }
                        return bound.raw();
                      },
                    };
                  };
                }
                return Reflect.get(target, property);
              },
            })
          : statement,
    });
    const during = await apiWith({ ...env, DB: writeDuringList }, LIST);
    await during.text();
    expect(wrote).toBe(true);
    // A replica still at the old version must not be answered with rows of the new one.
    expect(await cachedBodyOf(during)).toBeUndefined();
    const next = await countedList();
    expect(next.queries).toBeGreaterThan(1);
    expect(JSON.parse(next.body)[0]).toMatchObject({ id: 1, status: "shipped" });
    expect(next.response.headers.get("ETag")).not.toBe(during.headers.get("ETag"));
  });

  it("answers HEAD and 304 as before, and HEAD fills nothing", async () => {
    await seedOrders([{ id: 1 }]);
    const head = await countedList({}, { method: "HEAD" });
    expect(head.response.status).toBe(200);
    expect(head.response.headers.get("ETag")).toMatch(/^"orders-/);
    expect(await cachedBodyOf(head.response)).toBeUndefined();
    const afterHead = await countedList();
    expect(afterHead.queries).toBeGreaterThan(1);

    const notModified = await countedList(
      {},
      { headers: { "If-None-Match": afterHead.response.headers.get("ETag")! } },
    );
    expect(notModified.response.status).toBe(304);
    expect(notModified.body).toBe("");
    expect(notModified.queries).toBe(1);
    const headHit = await countedList({}, { method: "HEAD" });
    expect(headHit.response.headers.get("ETag")).toBe(afterHead.response.headers.get("ETag"));
    expect(headHit.queries).toBe(1);
  });

  it("with ORDER_LIST_CACHE off, reads every list from D1 in one round trip as before", async () => {
    await seedOrders([{ id: 1 }, { id: 2 }]);
    const off = { ORDER_LIST_CACHE: "off" };
    const first = await countedList(off);
    const second = await countedList(off);
    expect(second.body).toBe(first.body);
    expect(await cachedBodyOf(first.response)).toBeUndefined();
    // Version, first page and page ends: one batch.
    expect(first.queries).toBe(3);
    expect(second.queries).toBe(3);
  });

  it("gives the same bytes with any read-ahead, across page ends, empty pages and the tail", async () => {
    await seedManyOrders(3_000);
    await env.DB.prepare("DELETE FROM orders WHERE id > 1000 AND id <= 2000").run();
    await seedOrders([{ id: 9_000_000_000_000_000_000n }]);
    const bodies = new Set<string>();
    for (const readAhead of ["0", "1", "3", "8"]) {
      bodies.add((await countedList({ ORDER_LIST_CACHE: "off", ORDER_LIST_READ_AHEAD: readAhead })).body);
    }
    expect(bodies.size).toBe(1);
    const ids = (JSON.parse([...bodies][0]!.replace(/"id":(\d+)/g, '"id":"$1"')) as { id: string }[]).map(
      (order) => order.id,
    );
    expect(ids).toHaveLength(2_001);
    expect(ids.at(-1)).toBe("9000000000000000000");
  });
});

describe("a list larger than one invocation may read", () => {
  it("is refused before its first byte with order_list_too_large, naming the numbers", async () => {
    const errors = vi.spyOn(console, "error").mockImplementation(() => {});
    await seedManyOrders(3_500);
    // 4 page reads against 12 subrequests, of which the rest of the request keeps 10.
    const response = await apiWith({ ...env, SUBREQUEST_LIMIT: "12" } as Env, LIST);
    expect(response.status).toBe(500);
    const body = await errorBodyOf(response);
    expect(body.code).toBe("order_list_too_large");
    expect(body.message).toContain("needs 4 reads");
    expect(body.message).toContain("GET /v2/store/orders");
    expect((await apiWith({ ...env, SUBREQUEST_LIMIT: "14" } as Env, LIST)).status).toBe(200);
    errors.mockRestore();
  });
});

describe("reusing the version for lists without a bookmark", () => {
  const REUSE = { ORDER_LIST_VERSION_REUSE_MS: "1000" };
  afterEach(() => vi.useRealTimers());

  it("answers an unchanged list from the cache without any D1 query within a second, and reads afresh after it", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    await seedOrders([{ id: 1 }]);
    const first = await countedList(REUSE);
    await seedOrders([{ id: 2 }]);
    const reused = await countedList(REUSE);
    expect(reused.queries).toBe(0);
    expect(reused.body).toBe(first.body);
    expect(reused.response.headers.get("ETag")).toBe(first.response.headers.get("ETag"));

    vi.setSystemTime(Date.now() + 1_000);
    const fresh = await countedList(REUSE);
    expect(fresh.queries).toBeGreaterThan(0);
    expect(JSON.parse(fresh.body)).toHaveLength(2);
  });

  it("never reuses it for a request with a bookmark, nor after a cancel through this isolate", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    await seedOrders([{ id: 1 }, { id: 2 }]);
    const first = await countedList(REUSE);
    await seedOrders([{ id: 3 }]);
    const bookmarked = await countedList(REUSE, {
      headers: { [BOOKMARK_HEADER]: first.response.headers.get(BOOKMARK_HEADER)! },
    });
    expect(bookmarked.queries).toBeGreaterThan(0);
    expect(JSON.parse(bookmarked.body)).toHaveLength(3);

    await countedList(REUSE);
    expect((await apiWith({ ...env, ...REUSE } as Env, `${LIST}/2`, { method: "DELETE" })).status).toBe(204);
    const afterCancel = await countedList(REUSE);
    expect(afterCancel.queries).toBeGreaterThan(0);
    expect(JSON.parse(afterCancel.body)[1]).toMatchObject({ id: 2, status: "cancelled" });
  });

  it("keeps it after a cancel that changed nothing (404, 409): only a cancel forgets", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    await seedOrders([{ id: 1, status: "shipped" }]);
    await countedList(REUSE);
    expect((await apiWith({ ...env, ...REUSE } as Env, `${LIST}/404`, { method: "DELETE" })).status).toBe(404);
    expect((await apiWith({ ...env, ...REUSE } as Env, `${LIST}/1`, { method: "DELETE" })).status).toBe(409);
    expect((await countedList(REUSE)).queries).toBe(0);
  });

  it("is a plain rule of the clock", () => {
    const recent = { version: "v", readAt: 10_000 };
    expect(reusableVersion(recent, 10_999, 1_000)).toBe("v");
    expect(reusableVersion(recent, 11_000, 1_000)).toBeUndefined();
    expect(reusableVersion(recent, 9_999, 1_000)).toBeUndefined();
    expect(reusableVersion(recent, 10_500, 0)).toBeUndefined();
    expect(reusableVersion(undefined, 10_500, 1_000)).toBeUndefined();
  });
});
