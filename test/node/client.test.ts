import { describe, expect, it } from "vitest";
import { StoreOrdersClient, StoreOrdersError, verifyWebhook } from "../../client/src/store-orders-client";
import { parseWithExactIntegers } from "../../client/src/exact-json";
import { rateLimitOf } from "../../client/src/rate-limit-state";
import { retryDelayMs, DEFAULT_RETRY } from "../../client/src/retry";

/** A fake service: answers each call with the next response, and records the requests. */
function fakeService(...responses: (Response | Error)[]) {
  const requests: { url: string; headers: Headers; method: string }[] = [];
  const slept: number[] = [];
  const client = new StoreOrdersClient({
    baseUrl: "https://api.test/v1",
    apiKey: "so_test_key",
    fetch: async (input, init) => {
      requests.push({ url: String(input), headers: new Headers(init?.headers), method: init?.method ?? "GET" });
      const next = responses.shift();
      if (next === undefined) throw new Error("no more responses");
      if (next instanceof Error) throw next;
      return next;
    },
    sleep: async (ms) => {
      slept.push(ms);
    },
    random: () => 0.5,
  });
  return { client, requests, slept };
}

const json = (body: unknown, status = 200, headers: Record<string, string> = {}) =>
  new Response(JSON.stringify(body), { status, headers: { "Content-Type": "application/json", ...headers } });
const error = (code: string, status: number, headers: Record<string, string> = {}) =>
  json({ code, message: `${code}!`, status }, status, { "X-Request-Id": "req-1", ...headers });

describe("exact ids", () => {
  it("parses ids and petIds above 2^53 digit for digit, and leaves everything else as JSON.parse would", () => {
    const text =
      '[{"id":9223372036854775807,"petId":9007199254740993,"quantity":3,' +
      '"shipDate":"x\\"id\\":1","status":"pending","complete":false},' +
      ' {"id" : -9223372036854775808 ,"quantity":1.5e3}]';
    expect(parseWithExactIntegers(text, new Set(["id", "petId"]))).toEqual([
      {
        id: "9223372036854775807",
        petId: "9007199254740993",
        quantity: 3,
        shipDate: 'x"id":1',
        status: "pending",
        complete: false,
      },
      { id: "-9223372036854775808", quantity: 1500 },
    ]);
  });

  it("keeps 100,000 consecutive ids beyond 2^53 distinct, which JSON.parse halves", () => {
    const text = `[${Array.from({ length: 100_000 }, (_, i) => `{"id":${9007199254740993n + BigInt(i)}}`).join(",")}]`;
    const exact = parseWithExactIntegers(text, new Set(["id"])) as { id: string }[];
    expect(new Set(exact.map((order) => order.id)).size).toBe(100_000);
    expect(new Set((JSON.parse(text) as { id: number }[]).map((order) => order.id)).size).toBe(50_001);
  });
});

describe("retries", () => {
  it("waits what Retry-After says for 429 and 503, then tries again", async () => {
    const { client, slept, requests } = fakeService(
      error("rate_limit_exceeded", 429, { "Retry-After": "2" }),
      error("service_unavailable", 503, { "Retry-After": "1" }),
      json([]),
    );
    expect(await client.listOrders()).toEqual([]);
    expect(slept).toEqual([2000, 1000]);
    expect(requests).toHaveLength(3);
  });

  it("sends a write with an Idempotency-Key, the same on every retry, and waits out a 409 in flight", async () => {
    const { client, slept, requests } = fakeService(
      new TypeError("fetch failed: the connection was reset"),
      error("idempotency_key_in_flight", 409, { "Retry-After": "1" }),
      new Response(null, { status: 204, headers: { "Idempotent-Replayed": "true" } }),
      new Response(null, { status: 204 }),
    );
    await client.v2.orders.cancel("7");
    await client.v2.orders.cancel("8");
    const keys = requests.map((request) => request.headers.get("Idempotency-Key"));
    expect(requests.map((request) => request.method)).toEqual(["DELETE", "DELETE", "DELETE", "DELETE"]);
    expect(keys[0]).toMatch(/^[0-9a-f-]{36}$/);
    expect(keys.slice(0, 3)).toEqual([keys[0], keys[0], keys[0]]);
    expect(keys[3]).not.toBe(keys[0]);
    expect(slept[1]).toBe(1000);
  });

  it("sends no Idempotency-Key with a read, and retries no other 409", async () => {
    const { client, requests } = fakeService(json([]), error("order_already_shipped", 409));
    await client.listOrders();
    expect(requests[0]!.headers.has("Idempotency-Key")).toBe(false);
    await expect(client.v2.orders.cancel("9")).rejects.toMatchObject({ code: "order_already_shipped" });
    expect(requests).toHaveLength(2);
  });

  it("backs off exponentially with jitter when there is no Retry-After, and stops after maxAttempts", async () => {
    const { client, slept, requests } = fakeService(
      new TypeError("fetch failed"),
      new Response("", { status: 502 }),
      new Response("", { status: 504 }),
      new TypeError("again"),
    );
    const failure = await client.listOrders().catch((e: unknown) => e);
    expect(failure).toBeInstanceOf(StoreOrdersError);
    expect(failure).toMatchObject({ code: "network_error", status: 0 });
    // Full jitter (random 0.5) of 200, 400, 800 ms.
    expect(slept).toEqual([100, 200, 400]);
    expect(requests).toHaveLength(DEFAULT_RETRY.maxAttempts);
  });

  it("never retries another 4xx, nor a 500", async () => {
    for (const [code, status] of [
      ["invalid_api_key", 401],
      ["order_already_shipped", 409],
      ["insufficient_scope", 403],
      ["internal_error", 500],
    ] as const) {
      const { client, slept } = fakeService(error(code, status));
      await expect(client.cancelOrder("5")).rejects.toMatchObject({
        code,
        status,
        requestId: "req-1",
        message: `${code}!`,
      });
      expect(slept).toEqual([]);
    }
  });

  it("does not wait for a Retry-After beyond maxRetryAfterSeconds: the 429 is the answer", async () => {
    const { client, slept } = fakeService(error("api_key_banned", 429, { "Retry-After": "900" }));
    await expect(client.listOrders()).rejects.toMatchObject({ code: "api_key_banned", status: 429 });
    expect(slept).toEqual([]);
  });

  it("computes delays as a plain function", () => {
    const now = Date.parse("2026-11-23T12:00:00Z");
    expect(
      retryDelayMs({ status: 429, retryAfter: "Mon, 23 Nov 2026 12:00:03 GMT" }, 1, DEFAULT_RETRY, () => 0, now),
    ).toBe(3000);
    expect(retryDelayMs({ status: 429, retryAfter: null }, 3, DEFAULT_RETRY, () => 0.999, now)).toBe(799);
    expect(retryDelayMs({ status: 503, retryAfter: "1" }, 4, DEFAULT_RETRY, () => 0, now)).toBeUndefined();
    expect(retryDelayMs({ status: 404, retryAfter: "1" }, 1, DEFAULT_RETRY, () => 0, now)).toBeUndefined();
  });
});

describe("reading its own writes, revalidating, and the limits", () => {
  it("sends the newest bookmark with every list, and If-None-Match with the list it holds; a 304 returns that list", async () => {
    const list = '[{"id":9223372036854775807,"status":"pending","complete":false}]';
    const { client, requests } = fakeService(
      new Response(list, { headers: { ETag: '"orders-a"', "X-D1-Bookmark": "b1" } }),
      new Response(null, { status: 204, headers: { "X-D1-Bookmark": "b2" } }),
      new Response(null, { status: 304, headers: { ETag: '"orders-a"', "X-D1-Bookmark": "b3" } }),
    );
    const first = await client.listOrders();
    expect(first).toEqual([{ id: "9223372036854775807", status: "pending", complete: false }]);
    await client.cancelOrder(9223372036854775807n);
    expect(requests[1]).toMatchObject({
      method: "DELETE",
      url: "https://api.test/v1/store/orders/9223372036854775807",
    });
    expect(await client.listOrders()).toBe(first);
    expect(requests[2]!.headers.get("X-D1-Bookmark")).toBe("b2");
    expect(requests[2]!.headers.get("If-None-Match")).toBe('"orders-a"');
    expect(client.bookmark).toBe("b3");
  });

  it("refuses an id that is not a decimal int64 before sending anything", async () => {
    const { client, requests } = fakeService();
    await expect(client.cancelOrder("1e3")).rejects.toMatchObject({ code: "invalid_order_id" });
    expect(requests).toEqual([]);
  });

  it("exposes the RateLimit and RateLimit-Policy state of the last response", async () => {
    const headers = {
      RateLimit: '"minute";r=58;t=56, "day";r=998;t=39476',
      "RateLimit-Policy": '"minute";q=60;w=60, "day";q=1000;w=86400',
    };
    const { client } = fakeService(json([], 200, headers));
    await client.listOrders();
    expect(client.rateLimit?.windows).toEqual([
      { name: "minute", quota: 60, windowSeconds: 60, remaining: 58, resetSeconds: 56 },
      { name: "day", quota: 1000, windowSeconds: 86400, remaining: 998, resetSeconds: 39476 },
    ]);
    expect(rateLimitOf(new Headers())).toBeUndefined();
  });

  it("retries a list cut off mid-way, and reports a body that is not the Error shape as unexpected_response", async () => {
    const cut = new Response(
      new ReadableStream({ start: (c) => (c.enqueue(new TextEncoder().encode("[{")), c.error(new Error("cut"))) }),
    );
    const { client, requests } = fakeService(cut, json([]));
    expect(await client.listOrders()).toEqual([]);
    expect(requests).toHaveLength(2);
    const { client: other } = fakeService(new Response("<html>", { status: 418 }));
    await expect(other.listOrders()).rejects.toMatchObject({ code: "unexpected_response", status: 418 });
  });
});

describe("v2", () => {
  const page = (ids: string[], nextCursor: string | null, bookmark: string) =>
    new Response(
      `{"data":[${ids.map((id) => `{"id":"${id}","status":"pending","complete":false}`).join(",")}],` +
        `"nextCursor":${JSON.stringify(nextCursor)}}`,
      {
        headers: { "Content-Type": "application/json", "X-D1-Bookmark": bookmark },
      },
    );

  it("walks every page with the same filters, following nextCursor and sending each page's bookmark with the next", async () => {
    const { client, requests } = fakeService(
      page(["9007199254740993", "9007199254740994"], "c1", "b1"),
      page(["9223372036854775807"], null, "b2"),
    );
    const ids: string[] = [];
    for await (const order of client.v2.orders.list({
      status: ["pending", "shipped"],
      petId: 7n,
      complete: false,
      limit: 2,
    }))
      ids.push(order.id);
    expect(ids).toEqual(["9007199254740993", "9007199254740994", "9223372036854775807"]);
    expect(requests.map((request) => request.url)).toEqual([
      "https://api.test/v2/store/orders?status=pending%2Cshipped&petId=7&complete=false&limit=2",
      "https://api.test/v2/store/orders?status=pending%2Cshipped&petId=7&complete=false&limit=2&cursor=c1",
    ]);
    expect(requests[1]!.headers.get("X-D1-Bookmark")).toBe("b1");
  });

  it("reads the key's usage history with the range asked for", async () => {
    const history = {
      budget: "key_0123456789abcdef",
      granularity: "day",
      buckets: [{ start: "2030-03-10T00:00:00.000Z", admitted: 12, refused: 3 }],
    };
    const { client, requests } = fakeService(json(history), json(history));
    expect(await client.v2.usage({ granularity: "day", from: "2030-03-10T00:00:00Z" })).toEqual(history);
    await client.v2.usage();
    expect(requests.map((request) => request.url)).toEqual([
      "https://api.test/v2/usage?granularity=day&from=2030-03-10T00%3A00%3A00Z",
      "https://api.test/v2/usage",
    ]);
  });

  it("gets one order exactly, cancels through /v2, and refuses an id that is not a decimal int64 before sending", async () => {
    const { client, requests } = fakeService(
      json({ id: "1", status: "pending", complete: false }),
      new Response(null, { status: 204 }),
    );
    const text = '{"id":"9223372036854775807","status":"pending","complete":false}';
    const exact = fakeService(new Response(text, { headers: { "Content-Type": "application/json" } }));
    expect((await exact.client.v2.orders.get("9223372036854775807")).id).toBe("9223372036854775807");
    expect((await client.v2.orders.get(1n)).id).toBe("1");
    await client.v2.orders.cancel("1");
    expect(requests.map((request) => `${request.method} ${request.url}`)).toEqual([
      "GET https://api.test/v2/store/orders/1",
      "DELETE https://api.test/v2/store/orders/1",
    ]);
    await expect(client.v2.orders.get("1.5")).rejects.toMatchObject({ code: "invalid_order_id" });
    await expect(client.v2.orders.list({ petId: "x" })[Symbol.asyncIterator]().next()).rejects.toMatchObject({
      code: "invalid_pet_id",
    });
  });
});

describe("v2 events", () => {
  const eventOf = (seq: number) =>
    `{"id":"evt_${seq}","type":"order.created","createdAt":"2026-11-24T00:00:00.000Z",` +
    '"order":{"id":"9223372036854775807","status":"pending","complete":false}}';
  const eventsPage = (seqs: number[], nextCursor: string) =>
    new Response(`{"data":[${seqs.map((seq) => eventOf(seq)).join(",")}],"nextCursor":${JSON.stringify(nextCursor)}}`, {
      headers: { "Content-Type": "application/json" },
    });

  it("follows the feed page after page, long-polling, and keeps a cursor that resumes exactly after a whole page", async () => {
    const { client, requests } = fakeService(eventsPage([1, 2], "c2"), eventsPage([3], "c3"), eventsPage([], "c3"));
    const feed = client.v2.events.follow({
      types: ["order.created", "order.cancelled"],
      limit: 2,
      untilCaughtUp: true,
    });
    const seen: { id: string; orderId: string; cursor: string | undefined }[] = [];
    for await (const event of feed) seen.push({ id: event.id, orderId: event.order.id, cursor: feed.cursor });
    expect(seen).toEqual([
      { id: "evt_1", orderId: "9223372036854775807", cursor: undefined },
      { id: "evt_2", orderId: "9223372036854775807", cursor: "c2" },
      { id: "evt_3", orderId: "9223372036854775807", cursor: "c3" },
    ]);
    expect(requests.map((request) => request.url)).toEqual([
      "https://api.test/v2/store/order-events?types=order.created%2Corder.cancelled&limit=2&wait=20",
      "https://api.test/v2/store/order-events?types=order.created%2Corder.cancelled&limit=2&wait=20&after=c2",
      "https://api.test/v2/store/order-events?types=order.created%2Corder.cancelled&limit=2&wait=20&after=c3",
    ]);
    const resumed = fakeService(eventsPage([], "c3"));
    for await (const _ of resumed.client.v2.events.follow({ after: feed.cursor, waitSeconds: 0, untilCaughtUp: true }))
      expect.unreachable();
    expect(resumed.requests[0]!.url).toBe("https://api.test/v2/store/order-events?wait=0&after=c3");
  });

  it("stops when its signal aborts, and reports an expired cursor as the error it is", async () => {
    const stop = new AbortController();
    const { client } = fakeService(eventsPage([1], "c1"), eventsPage([2], "c2"));
    const ids: string[] = [];
    for await (const event of client.v2.events.follow({ signal: stop.signal })) {
      ids.push(event.id);
      stop.abort();
    }
    expect(ids).toEqual(["evt_1"]);
    const expired = fakeService(error("cursor_expired", 410));
    await expect(
      expired.client.v2.events.follow({ after: "old" })[Symbol.asyncIterator]().next(),
    ).rejects.toMatchObject({ code: "cursor_expired", status: 410 });
  });
});

describe("verifyWebhook", () => {
  const vector = {
    secret: "whsec_MfKQ9r8GKYqrTwjUPD8ILPZIo2LaLaSw",
    headers: {
      "webhook-id": "msg_p5jXN8AQM9LWM0D4loKWxJek",
      "webhook-timestamp": "1614265330",
      "webhook-signature": "v1,g0hM9SsE+OTPJTGt/tmIKtSyZlE3uFJELVlNIOLJ1OE=",
    },
    body: '{"test": 2432232314}',
  };
  const at = 1614265330_000;

  it("accepts the Standard Webhooks reference vector, among other signatures, with Headers or a plain object", async () => {
    expect(await verifyWebhook(vector.secret, vector.headers, vector.body, { now: at })).toEqual({ test: 2432232314 });
    const rotated = { ...vector.headers, "webhook-signature": `v1,bm9wZQ== ${vector.headers["webhook-signature"]}` };
    expect(await verifyWebhook(vector.secret, new Headers(rotated), vector.body, { now: at + 299_000 })).toEqual({
      test: 2432232314,
    });
  });

  it.each([
    ["a changed body", { body: '{"test": 2432232315}' }, /no signature matches/],
    ["another secret", { secret: `whsec_${btoa("x".repeat(24))}` }, /no signature matches/],
    ["a changed id", { headers: { ...vector.headers, "webhook-id": "msg_other" } }, /no signature matches/],
    ["an old timestamp", { now: at + 301_000 }, /outside the tolerance/],
    ["a missing signature", { headers: { "webhook-id": "x", "webhook-timestamp": "1614265330" } }, /required/],
  ])("refuses %s", async (_, change, message) => {
    const { secret, headers, body, now } = { ...vector, now: at, ...change };
    await expect(verifyWebhook(secret, headers, body, { now })).rejects.toThrow(message);
  });

  it("reads an event's ids exactly: strings as v2 writes them, and integers as deliveries signed before that carried them", async () => {
    const secret = `whsec_${btoa("k".repeat(32))}`;
    const { signWebhook } = await import("../../src/webhook-delivery/webhook-signature");
    for (const id of ['"9223372036854775807"', "9223372036854775807"]) {
      const body = `{"id":"evt_1","type":"order.created","order":{"id":${id},"status":"pending","complete":false}}`;
      const headers = {
        "webhook-id": "evt_1",
        "webhook-timestamp": "1614265330",
        "webhook-signature": await signWebhook(secret, "evt_1", 1614265330, body),
      };
      expect(await verifyWebhook<{ order: { id: string } }>(secret, headers, body, { now: at })).toMatchObject({
        order: { id: "9223372036854775807" },
      });
    }
  });
});
