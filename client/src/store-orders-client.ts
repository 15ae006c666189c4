import type { components } from "./schema";
import { errorOf, StoreOrdersError } from "./store-orders-error";
import { parseWithExactIntegers } from "./exact-json";
import { rateLimitOf, type RateLimitState } from "./rate-limit";
import { DEFAULT_RETRY, retryDelayMs, type Outcome, type RetryOptions } from "./retry";

export { StoreOrdersError } from "./store-orders-error";
export type { RateLimitState, RateLimitWindow } from "./rate-limit";
export type { RetryOptions } from "./retry";

/**
 * An order as the document describes it, with its int64 ids as exact decimal
 * strings ("9223372036854775807"): JSON numbers above 2^53 cannot survive a
 * double, and strings compare, print and go back into URLs unchanged.
 */
export type Order = Omit<components["schemas"]["Order"], "id" | "petId"> & { id: string; petId?: string };

/** An order id as the client takes it: a decimal string or a bigint (never a number, which may already be rounded). */
export type OrderId = string | bigint;

export interface ClientOptions {
  /** The service's base URL, ending in /v1 (e.g. http://localhost:8787/v1). */
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
    return this.#call("GET", "/store/orders", headers, async (response) => {
      if (response.status === 304 && this.#list) return this.#list.orders;
      const orders = this.#ordersOf(await response.text(), response);
      const etag = response.headers.get("ETag");
      this.#list = etag === null ? undefined : { etag, orders };
      return orders;
    });
  }

  /** Cancels a pending order. Cancelling one already cancelled succeeds; a shipped one fails with `order_already_shipped`. */
  async cancelOrder(orderId: OrderId): Promise<void> {
    const id = String(orderId);
    if (!INT64.test(id)) throw new StoreOrdersError("invalid_order_id", `orderId must be a decimal 64-bit integer, got ${id}`, 400, undefined);
    await this.#call("DELETE", `/store/orders/${id}`, {}, async () => undefined);
  }

  /** One operation: attempts until a success, an error not worth retrying, or the attempts run out. */
  async #call<T>(method: string, path: string, headers: Record<string, string>, read: (response: Response) => Promise<T>): Promise<T> {
    for (let attempt = 1; ; attempt++) {
      let outcome: Outcome;
      let failure: StoreOrdersError;
      try {
        const response = await this.#fetch(`${this.#options.baseUrl}${path}`, {
          method,
          headers: { ...headers, Authorization: `Bearer ${this.#options.apiKey}`, Accept: "application/json" },
        });
        this.#observe(response);
        if (response.ok || response.status === 304) {
          try {
            return await read(response);
          } catch (error) {
            // A body cut off mid-way: the service stops a list that failed rather than send a short one.
            if (error instanceof StoreOrdersError && error.code !== "unexpected_response") throw error;
            outcome = { status: "network_error" };
            failure = new StoreOrdersError("unexpected_response", "The response body was incomplete.", response.status, requestIdOf(response), { cause: error });
          }
        } else {
          outcome = { status: response.status, retryAfter: response.headers.get("Retry-After") };
          failure = await errorOf(response);
        }
      } catch (error) {
        outcome = { status: "network_error" };
        failure = new StoreOrdersError("network_error", `No response from ${this.#options.baseUrl}.`, 0, undefined, { cause: error });
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

  #ordersOf(text: string, response: Response): Order[] {
    let orders: unknown;
    try {
      orders = parseWithExactIntegers(text, ID_KEYS);
    } catch (error) {
      throw new StoreOrdersError("unexpected_response", "The order list is not valid JSON.", response.status, requestIdOf(response), { cause: error });
    }
    if (!Array.isArray(orders) || !orders.every((order) => typeof order?.id === "string" && INT64.test(order.id))) {
      throw new StoreOrdersError("unexpected_response", "The order list is not an array of orders.", response.status, requestIdOf(response));
    }
    return orders as Order[];
  }
}

const requestIdOf = (response: Response) => response.headers.get("X-Request-Id") ?? undefined;
