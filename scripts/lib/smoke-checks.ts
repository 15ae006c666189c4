/**
 * The smoke checks (docs/operations.md#promotion-staging-smoke-production): a
 * read-only check of a running deployment against the contract, v1 and v2.
 * The only write is a cancel of an order id that does not exist. With `version`, every
 * request asks for that Worker version (`Cloudflare-Workers-Version-Overrides`)
 * and every answer must come from it (`X-Worker-Version`): an override that
 * was not applied fails the check, never passes silently.
 */
import { z } from "zod";
import { ALWAYS_SENT } from "../../src/framework/header-catalogue";
import { ErrorBody } from "../../src/framework/api-error";
import { Order, OrderPage, OrderV2 } from "../../src/orders/order-schemas";

const TIMEOUT_MS = 10_000;

// v1's ids beyond 2^53 lose digits in JSON.parse; the shape check only needs "a number". v2's are strings, exact.
const ListedOrder = Order.extend({ id: z.number(), petId: z.number().optional() });

export interface SmokeTarget {
  /** The deployment's base URL, ending in /v1. */
  baseUrl: string;
  key: string;
  /** Check this Worker version only: the worker's name and the version id. */
  version?: { worker: string; id: string };
}

export interface SmokeResult {
  name: string;
  /** Undefined when the check passed. */
  problem?: string;
  /** The answer came from another version: the override is not (yet) applied. */
  wrongVersion?: boolean;
}

class WrongVersion extends Error {}

/** A large id that the list does not contain, so the cancel cannot touch a real order. */
function unusedOrderId(list: string): string {
  for (;;) {
    const id = `9${String(Math.floor(Math.random() * 1e15)).padStart(15, "0")}`;
    if (!new RegExp(`"id":${id}[,}]`).test(list)) return id;
  }
}

function expect(condition: boolean, problem: string): asserts condition {
  if (!condition) throw new Error(problem);
}

/** The `rel="next"` target of a Link header. */
const nextLink = (link: string | null) => (link === null ? undefined : /<([^>]+)>\s*;\s*rel="next"/.exec(link)?.[1]);

/**
 * fetch()'s failure when the connection was reset or closed under it (undici's TypeError, its cause the socket's
 * error).
 */
function connectionReset(error: unknown): boolean {
  const code = (error as { cause?: { code?: string } } | undefined)?.cause?.code;
  return error instanceof TypeError && ["ECONNRESET", "EPIPE", "UND_ERR_SOCKET"].includes(code ?? "");
}

export async function runSmokeChecks({ baseUrl, key, version }: SmokeTarget): Promise<SmokeResult[]> {
  // The same deployment serves v2 beside v1 (BASE_URL names v1's base).
  const v2 = baseUrl.replace(/\/v1\/?$/, "/v2");

  /**
   * A request to `path` under v1's base, or to an absolute URL (a Link); with the version override when one is checked.
   */
  async function call(method: string, path: string, authorized = true): Promise<Response> {
    const headers: Record<string, string> = authorized ? { Authorization: `Bearer ${key}` } : {};
    if (version) headers["Cloudflare-Workers-Version-Overrides"] = `${version.worker}="${version.id}"`;
    const url = /^https?:\/\//.test(path) ? path : `${baseUrl}${path}`;
    const send = () => fetch(url, { method, headers, signal: AbortSignal.timeout(TIMEOUT_MS) });
    // A connection the server closed as it was reused is tried once more, as any client would (every check is safe to
    // repeat: reads, and a cancel that answers alike again); a second failure is the check's.
    const response = await send().catch((error: unknown) => {
      if (!connectionReset(error)) throw error;
      return send();
    });
    const answeredBy = response.headers.get("X-Worker-Version");
    if (version && answeredBy !== version.id) {
      await response.body?.cancel();
      throw new WrongVersion(
        `answered by version ${answeredBy ?? "(none named)"}, not ${version.id}: the version override was not applied`,
      );
    }
    return response;
  }

  async function expectError(response: Response, status: number, code: string): Promise<void> {
    expect(response.status === status, `expected ${status}, got ${response.status}`);
    const parsed = ErrorBody.safeParse(await response.json().catch(() => undefined));
    expect(parsed.success, "the body is not the Error shape {code, message, status}");
    expect(parsed.data.code === code, `expected code ${code}, got ${parsed.data.code}`);
    expect(parsed.data.status === status, `body status ${parsed.data.status} differs from HTTP ${status}`);
  }

  let listBody = "";
  let pageOrderId: string | undefined;
  /**
   * Why the page check failed: the single-order check, which needs its order, fails the same way (a version not applied
   * yet stays that).
   */
  let pageFailure: unknown;

  /**
   * A v2 page of pending orders: 200, the page shape, every order pending; the first id kept (as digits) for the
   * single-order check.
   */
  async function pendingPage(url: string): Promise<Response> {
    const response = await call("GET", url);
    expect(response.status === 200, `${url}: expected 200, got ${response.status}`);
    const text = await response.text();
    const page = OrderPage.safeParse(JSON.parse(text));
    expect(page.success, `${url}: not a page {data, nextCursor}: ${page.error?.issues[0]?.message}`);
    expect(
      page.data.data.every((order) => order.status === "pending"),
      `${url}: an order that is not pending in a status=pending page`,
    );
    pageOrderId ??= page.data.data[0]?.id;
    return new Response(null, { headers: response.headers });
  }

  // Without a key (an environment's first release, before any key can exist), only the checks that need none.
  const checks: { name: string; keyless?: true; run(): Promise<void> }[] = [
    {
      name: "GET /store/orders lists orders in the Order shape",
      async run() {
        const response = await call("GET", "/store/orders");
        expect(response.status === 200, `expected 200, got ${response.status}`);
        expect(/^application\/json/.test(response.headers.get("Content-Type") ?? ""), "Content-Type is not JSON");
        listBody = await response.text();
        const orders = z.array(ListedOrder).safeParse(JSON.parse(listBody));
        expect(orders.success, `not an array of orders: ${orders.error?.issues[0]?.message}`);
      },
    },
    {
      name: "an authenticated response carries every rate-limit header",
      async run() {
        const response = await call("GET", "/store/orders");
        await response.body?.cancel();
        const missing = ALWAYS_SENT.filter((name) => !response.headers.has(name));
        expect(missing.length === 0, `missing: ${missing.join(", ")}`);
      },
    },
    {
      name: "DELETE /store/orders/{id} of an unknown id is 404 order_not_found",
      async run() {
        await expectError(await call("DELETE", `/store/orders/${unusedOrderId(listBody)}`), 404, "order_not_found");
      },
    },
    {
      name: "a call without a key is 401 missing_api_key with a Bearer challenge",
      keyless: true,
      async run() {
        const response = await call("GET", "/store/orders", false);
        const challenge = response.headers.get("WWW-Authenticate") ?? "";
        await expectError(response, 401, "missing_api_key");
        expect(challenge.startsWith("Bearer "), `WWW-Authenticate is "${challenge}"`);
        expect(response.headers.has("X-RateLimit-Limit"), "rate-limit headers missing on the 401");
      },
    },
    {
      name: "GET /v2/store/orders?status=pending is a page of pending orders, and its Link leads to the next",
      async run() {
        try {
          const first = await pendingPage(`${v2}/store/orders?status=pending&limit=2`);
          const next = nextLink(first.headers.get("Link"));
          // A deployment with two pending orders or fewer has no next page to follow.
          if (next !== undefined) await pendingPage(next);
        } catch (error) {
          pageFailure = error;
          throw error;
        }
      },
    },
    {
      name: "GET /v2/store/orders/{id} of a listed order is that order",
      async run() {
        if (pageFailure !== undefined) throw pageFailure;
        // A listed pending order, else any listed one; a deployment without orders has none to look up.
        const id = pageOrderId ?? /"id":(-?\d+)/.exec(listBody)?.[1];
        if (id === undefined) return;
        const response = await call("GET", `${v2}/store/orders/${id}`);
        expect(response.status === 200, `expected 200, got ${response.status}`);
        const text = await response.text();
        const order = OrderV2.safeParse(JSON.parse(text));
        expect(order.success, `not an Order: ${order.error?.issues[0]?.message}`);
        expect(order.data.id === id, `answered another order than ${id}`);
      },
    },
    {
      name: "GET /v2/openapi.json is an OpenAPI 3.1 document with v2's operations",
      keyless: true,
      async run() {
        const response = await call("GET", `${v2}/openapi.json`, false);
        expect(response.status === 200, `expected 200, got ${response.status}`);
        const document = (await response.json()) as { openapi?: string; paths?: Record<string, object> };
        expect(document.openapi?.startsWith("3.1") === true, `openapi is ${document.openapi}`);
        for (const path of ["/store/orders", "/store/orders/{orderId}"]) {
          expect(document.paths?.[path] !== undefined, `the document has no ${path}`);
        }
      },
    },
    {
      name: "GET /openapi.json is an OpenAPI 3.1 document with both operations",
      keyless: true,
      async run() {
        const response = await call("GET", "/openapi.json", false);
        expect(response.status === 200, `expected 200, got ${response.status}`);
        const document = (await response.json()) as { openapi?: string; paths?: Record<string, object> };
        expect(document.openapi?.startsWith("3.1") === true, `openapi is ${document.openapi}`);
        for (const path of ["/store/orders", "/store/orders/{orderId}"]) {
          expect(document.paths?.[path] !== undefined, `the document has no ${path}`);
        }
      },
    },
  ];

  const results: SmokeResult[] = [];
  for (const check of checks.filter((check) => key !== "" || check.keyless)) {
    try {
      await check.run();
      results.push({ name: check.name });
    } catch (error) {
      const reason =
        error instanceof Error
          ? error.cause instanceof Error
            ? `${error.message}: ${error.cause.message}`
            : error.message
          : String(error);
      results.push({ name: check.name, problem: reason, ...(error instanceof WrongVersion && { wrongVersion: true }) });
    }
  }
  return results;
}

/** One line per check, PASS or FAIL with the reason. */
export const describeResults = (results: SmokeResult[]) =>
  results.map((result) =>
    result.problem === undefined ? `PASS ${result.name}` : `FAIL ${result.name}: ${result.problem}`,
  );
