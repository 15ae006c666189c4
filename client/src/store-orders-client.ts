import type { components as componentsV2 } from "./schema-v2.js";
import { errorOf, StoreOrdersError } from "./store-orders-error.js";
import { parseWithExactIntegers } from "./exact-json.js";
import { rateLimitOf, type RateLimitState } from "./rate-limit-state.js";
import { DEFAULT_RETRY, retryDelayMs, type Outcome, type RetryOptions } from "./retry.js";

export { StoreOrdersError } from "./store-orders-error.js";
export { verifyWebhook, WebhookVerificationError, type VerifyOptions } from "./verify-webhook.js";
export type { RateLimitState, RateLimitWindow } from "./rate-limit-state.js";
export type { RetryOptions } from "./retry.js";

/**
 * An order as v2's document describes it, its int64 ids exact decimal strings
 * ("9223372036854775807"), as v2 writes them: JSON numbers above 2^53 cannot
 * survive a double, and strings compare, print and go back into URLs
 * unchanged. v1's list, which writes them as JSON integers, is read into the
 * same shape.
 */
export type Order = componentsV2["schemas"]["Order"];

/** An order id as the client takes it: a decimal string or a bigint (never a number, which may already be rounded). */
export type OrderId = string | bigint;

/** v2's filters of the order list, combined with AND; `limit` is the page size (1 to 1000). */
export interface OrderFilters {
  status?: Order["status"][];
  petId?: OrderId;
  complete?: boolean;
  /** RFC 3339 date-times: from inclusive, to exclusive. */
  shipDateFrom?: string;
  shipDateTo?: string;
  limit?: number;
}

/** v2's operations on orders. */
export interface OrdersV2 {
  /** Every order that matches, page after page (each page's bookmark sent with the next), as one async iteration. */
  list(filters?: OrderFilters): AsyncIterable<Order>;
  get(orderId: OrderId): Promise<Order>;
  /** v1's cancel, through /v2. */
  cancel(orderId: OrderId): Promise<void>;
}

/** v2's order events. */
export interface EventsV2 {
  /** Every change to an order from `after` on, in commit order. */
  follow(options?: FollowOptions): OrderEventFeed;
}

/** An order event (docs/api.md, "Events and webhooks"), its order's ids exact strings as in Order. */
export type OrderEvent = componentsV2["schemas"]["OrderEvent"];
export type OrderEventType = OrderEvent["type"];

/** The caller's usage history: admitted, refused and reserved per bucket, empty ones as zeros (docs/api.md#usage). */
export type UsageHistory = componentsV2["schemas"]["UsageHistory"];

export interface UsageOptions {
  granularity?: UsageHistory["granularity"];
  /** RFC 3339 date-times: the first bucket holds from; the range ends at to. */
  from?: string;
  to?: string;
}

export interface FollowOptions {
  /** Where to resume: a `cursor` saved from an earlier feed. Without it, the oldest event kept. */
  after?: string;
  types?: OrderEventType[];
  /** Events a request asks for (1 to 1000). */
  limit?: number;
  /** How long each request waits for an event when there is none (0 to 20 s, default 20). */
  waitSeconds?: number;
  /** Ends the iteration once a page comes back empty: everything until now has been seen. Default: follow forever. */
  untilCaughtUp?: boolean;
  /** Ends the iteration (after the request in flight). */
  signal?: AbortSignal;
}

/**
 * The feed as one async iteration, long-polling when caught up. `cursor` is
 * where to resume: save it after handling an event and pass it as `after`
 * later. It moves a whole page at a time (as a page's last event is handed
 * over), so resuming from a stop in the middle of a page repeats that page's
 * earlier events: deduplicate by `id`, as for webhooks.
 */
export interface OrderEventFeed extends AsyncIterable<OrderEvent> {
  readonly cursor: string | undefined;
}

export interface ClientOptions {
  /** The service's base URL, ending in /v1 (e.g. http://localhost:8787/v1); v2 is beside it, at /v2. */
  baseUrl: string;
  apiKey: string;
  retry?: Partial<RetryOptions>;
  /** For tests and other runtimes: the fetch, the clock's wait and the jitter's randomness to use. */
  fetch?: typeof fetch;
  sleep?: (ms: number) => Promise<void>;
  random?: () => number;
}

const INT64 = /^-?(0|[1-9][0-9]*)$/;
const ID_KEYS = new Set(["id", "petId"]);

/**
 * A client for the Store Orders API that keeps its promises for you: ids
 * exact, the rate limits respected (429 and 503 retried after Retry-After,
 * other transient failures with backoff and jitter, a bounded number of
 * times), a cancel always visible in the next list (the latest X-D1-Bookmark
 * goes with every list), and an unchanged list revalidated with its ETag
 * rather than downloaded again. One instance per API key; it keeps the
 * bookmark, the last list and the rate-limit state of that key's calls.
 */
export class StoreOrdersClient {
  readonly #options: ClientOptions;
  readonly #retry: RetryOptions;
  readonly #fetch: typeof fetch;
  readonly #sleep: (ms: number) => Promise<void>;
  readonly #random: () => number;
  #bookmark: string | undefined;
  #list: { etag: string; orders: Order[] } | undefined;
  #rateLimit: RateLimitState | undefined;

  constructor(options: ClientOptions) {
    this.#options = { ...options, baseUrl: options.baseUrl.replace(/\/+$/, "") };
    this.#retry = { ...DEFAULT_RETRY, ...options.retry };
    this.#fetch = options.fetch ?? ((input, init) => fetch(input, init));
    this.#sleep = options.sleep ?? ((ms) => new Promise((resolve) => setTimeout(resolve, ms)));
    this.#random = options.random ?? Math.random;
  }

  /**
   * Version 2 of the API (beta): the order list filtered and paged, one order, cancel; the order event feed; the key's
   * usage.
   */
  readonly v2: { orders: OrdersV2; events: EventsV2; usage(options?: UsageOptions): Promise<UsageHistory> } = {
    orders: {
      list: (filters = {}) => this.#walk(filters),
      get: (orderId) => this.#getOrder(orderId),
      cancel: (orderId) => this.#cancel(`${this.#v2Base}/store/orders`, orderId),
    },
    events: { follow: (options = {}) => this.#follow(options) },
    usage: (options = {}) => this.#usage(options),
  };

  /** The limits as the last response reported them: what is left in each window, and when it resets. */
  get rateLimit(): RateLimitState | undefined {
    return this.#rateLimit;
  }

  /** The newest X-D1-Bookmark seen; sent with every list so it reads at least that new. */
  get bookmark(): string | undefined {
    return this.#bookmark;
  }

  /**
   * Every order, ascending by id. Revalidates the list it already holds: on
   * 304 it returns that list without downloading it again.
   */
  async listOrders(): Promise<Order[]> {
    const headers: Record<string, string> = {};
    if (this.#bookmark !== undefined) headers["X-D1-Bookmark"] = this.#bookmark;
    if (this.#list !== undefined) headers["If-None-Match"] = this.#list.etag;
    return this.#call("GET", `${this.#options.baseUrl}/store/orders`, headers, async (response) => {
      if (response.status === 304 && this.#list) return this.#list.orders;
      const orders = this.#ordersOf(await response.text(), response);
      const etag = response.headers.get("ETag");
      this.#list = etag === null ? undefined : { etag, orders };
      return orders;
    });
  }

  /**
   * Cancels a pending order. Cancelling one already cancelled succeeds; a shipped one fails with
   * `order_already_shipped`.
   */
  cancelOrder(orderId: OrderId): Promise<void> {
    return this.#cancel(`${this.#options.baseUrl}/store/orders`, orderId);
  }

  get #v2Base(): string {
    return `${this.#options.baseUrl.replace(/\/v1$/, "")}/v2`;
  }

  async #cancel(orders: string, orderId: OrderId): Promise<void> {
    await this.#call("DELETE", `${orders}/${exactId(orderId)}`, {}, async () => undefined);
  }

  async *#walk(filters: OrderFilters): AsyncGenerator<Order> {
    const query = new URLSearchParams();
    if (filters.status) query.set("status", filters.status.join(","));
    if (filters.petId !== undefined) query.set("petId", exactId(filters.petId, "petId"));
    if (filters.complete !== undefined) query.set("complete", String(filters.complete));
    if (filters.shipDateFrom !== undefined) query.set("shipDateFrom", filters.shipDateFrom);
    if (filters.shipDateTo !== undefined) query.set("shipDateTo", filters.shipDateTo);
    if (filters.limit !== undefined) query.set("limit", String(filters.limit));
    for (let cursor: string | null | undefined; cursor !== null; ) {
      if (cursor !== undefined) query.set("cursor", cursor);
      const page = await this.#call(
        "GET",
        `${this.#v2Base}/store/orders?${query}`,
        this.#bookmarkHeader(),
        async (response) => {
          const body = this.#parse(await response.text(), response) as { data?: unknown; nextCursor?: unknown };
          if (!isOrders(body.data) || (typeof body.nextCursor !== "string" && body.nextCursor !== null)) {
            throw new StoreOrdersError(
              "unexpected_response",
              "The page is not {data, nextCursor}.",
              response.status,
              requestIdOf(response),
            );
          }
          return { orders: body.data, next: body.nextCursor };
        },
      );
      yield* page.orders;
      cursor = page.next;
    }
  }

  #usage(options: UsageOptions): Promise<UsageHistory> {
    const query = new URLSearchParams(
      Object.entries(options).filter((entry): entry is [string, string] => entry[1] !== undefined),
    );
    return this.#call("GET", `${this.#v2Base}/usage${query.size ? `?${query}` : ""}`, {}, async (response) => {
      const body = this.#parse(await response.text(), response) as Partial<UsageHistory>;
      if (typeof body.budget !== "string" || !Array.isArray(body.buckets)) {
        throw new StoreOrdersError(
          "unexpected_response",
          "The answer is not {budget, granularity, buckets}.",
          response.status,
          requestIdOf(response),
        );
      }
      return body as UsageHistory;
    });
  }

  #follow(options: FollowOptions): OrderEventFeed {
    const query = new URLSearchParams();
    if (options.types) query.set("types", options.types.join(","));
    if (options.limit !== undefined) query.set("limit", String(options.limit));
    query.set("wait", String(options.waitSeconds ?? 20));
    const feed = { cursor: options.after, [Symbol.asyncIterator]: () => pages() };
    const eventsPage = (after: string | undefined) => {
      if (after !== undefined) query.set("after", after);
      return this.#call(
        "GET",
        `${this.#v2Base}/store/order-events?${query}`,
        this.#bookmarkHeader(),
        async (response) => {
          const body = this.#parse(await response.text(), response) as { data?: unknown; nextCursor?: unknown };
          if (!isEvents(body.data) || typeof body.nextCursor !== "string") {
            throw new StoreOrdersError(
              "unexpected_response",
              "The page is not {data, nextCursor}.",
              response.status,
              requestIdOf(response),
            );
          }
          return { events: body.data, next: body.nextCursor };
        },
      );
    };
    async function* pages(): AsyncGenerator<OrderEvent> {
      while (!options.signal?.aborted) {
        const page = await eventsPage(feed.cursor);
        for (const [i, event] of page.events.entries()) {
          // The cursor passes the page as its last event is handed over: saved after handling that event, it resumes
          // exactly.
          if (i === page.events.length - 1) feed.cursor = page.next;
          yield event;
        }
        feed.cursor = page.next;
        if (page.events.length === 0 && options.untilCaughtUp) return;
      }
    }
    return feed;
  }

  async #getOrder(orderId: OrderId): Promise<Order> {
    return this.#call(
      "GET",
      `${this.#v2Base}/store/orders/${exactId(orderId)}`,
      this.#bookmarkHeader(),
      async (response) => {
        const order = this.#parse(await response.text(), response);
        if (!isOrders([order]))
          throw new StoreOrdersError(
            "unexpected_response",
            "The answer is not an order.",
            response.status,
            requestIdOf(response),
          );
        return order as Order;
      },
    );
  }

  #bookmarkHeader(): Record<string, string> {
    return this.#bookmark === undefined ? {} : { "X-D1-Bookmark": this.#bookmark };
  }

  /** One operation: attempts until a success, an error not worth retrying, or the attempts run out. */
  async #call<T>(
    method: string,
    url: string,
    headers: Record<string, string>,
    read: (response: Response) => Promise<T>,
  ): Promise<T> {
    // One key for a write and every retry of it: the service runs it once and answers the retries with its answer.
    const idempotency: Record<string, string> = method === "GET" ? {} : { "Idempotency-Key": crypto.randomUUID() };
    for (let attempt = 1; ; attempt++) {
      let outcome: Outcome;
      let failure: StoreOrdersError;
      try {
        const response = await this.#fetch(url, {
          method,
          headers: {
            ...headers,
            ...idempotency,
            Authorization: `Bearer ${this.#options.apiKey}`,
            Accept: "application/json",
          },
        });
        this.#observe(response);
        if (response.ok || response.status === 304) {
          try {
            return await read(response);
          } catch (error) {
            // A body cut off mid-way: the service stops a list that failed rather than send a short one.
            if (error instanceof StoreOrdersError && error.code !== "unexpected_response") throw error;
            outcome = { status: "network_error" };
            failure = new StoreOrdersError(
              "unexpected_response",
              "The response body was incomplete.",
              response.status,
              requestIdOf(response),
              { cause: error },
            );
          }
        } else {
          failure = await errorOf(response);
          outcome = { status: response.status, retryAfter: response.headers.get("Retry-After"), code: failure.code };
        }
      } catch (error) {
        outcome = { status: "network_error" };
        failure = new StoreOrdersError("network_error", `No response from ${this.#options.baseUrl}.`, 0, undefined, {
          cause: error,
        });
      }
      const delay = retryDelayMs(outcome, attempt, this.#retry, this.#random, Date.now());
      if (delay === undefined) throw failure;
      await this.#sleep(delay);
    }
  }

  #observe(response: Response): void {
    const bookmark = response.headers.get("X-D1-Bookmark");
    if (bookmark !== null) this.#bookmark = bookmark;
    this.#rateLimit = rateLimitOf(response.headers) ?? this.#rateLimit;
  }

  /**
   * v1's ids arrive as JSON integers and come out as their exact digits; v2's already are strings, and stay as they
   * are.
   */
  #parse(text: string, response: Response): unknown {
    try {
      return parseWithExactIntegers(text, ID_KEYS);
    } catch (error) {
      throw new StoreOrdersError(
        "unexpected_response",
        "The answer is not valid JSON.",
        response.status,
        requestIdOf(response),
        { cause: error },
      );
    }
  }

  #ordersOf(text: string, response: Response): Order[] {
    const orders = this.#parse(text, response);
    if (!isOrders(orders))
      throw new StoreOrdersError(
        "unexpected_response",
        "The order list is not an array of orders.",
        response.status,
        requestIdOf(response),
      );
    return orders;
  }
}

const isOrders = (value: unknown): value is Order[] =>
  Array.isArray(value) && value.every((order) => typeof order?.id === "string" && INT64.test(order.id));

const isEvents = (value: unknown): value is OrderEvent[] =>
  Array.isArray(value) &&
  value.every((event) => typeof event?.id === "string" && /^evt_[0-9]+$/.test(event.id) && isOrders([event.order]));

/** An id as the exact decimal text the API takes, refused before sending when it is not one. */
function exactId(id: OrderId, name = "orderId"): string {
  const text = String(id);
  if (!INT64.test(text))
    throw new StoreOrdersError(
      `invalid_${name === "orderId" ? "order" : "pet"}_id`,
      `${name} must be a decimal 64-bit integer, got ${text}`,
      400,
      undefined,
    );
  return text;
}

const requestIdOf = (response: Response) => response.headers.get("X-Request-Id") ?? undefined;
