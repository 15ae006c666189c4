/**
 * `npm run smoke -- --base-url URL --key KEY`: checks a running deployment
 * against the contract before it is promoted. It changes nothing: the only
 * write it sends is a cancel of an order id that does not exist.
 */
import { parseArgs } from "node:util";
import { z } from "zod";
import { ALWAYS_SENT } from "../src/header-catalogue";
import { ErrorBody } from "../src/api-error";
import { Order } from "../src/orders/order-schemas";

const USAGE = "Usage: npm run smoke -- --base-url https://host/v1 --key <API key>";
const TIMEOUT_MS = 10_000;

// Ids beyond 2^53 lose digits in JSON.parse; the shape check only needs "a number".
const ListedOrder = Order.extend({ id: z.number(), petId: z.number().optional() });

interface Check {
  name: string;
  run(): Promise<void>;
}

function options(): { baseUrl: string; key: string } {
  try {
    const { values } = parseArgs({
      options: { "base-url": { type: "string" }, key: { type: "string" } },
      strict: true,
    });
    const baseUrl = values["base-url"]?.replace(/\/+$/, "");
    if (!baseUrl || !values.key || !URL.canParse(baseUrl)) throw new Error("--base-url (a URL) and --key are required");
    return { baseUrl, key: values.key };
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

const { baseUrl, key } = options();

async function call(method: string, path: string, authorized = true): Promise<Response> {
  return fetch(`${baseUrl}${path}`, {
    method,
    headers: authorized ? { Authorization: `Bearer ${key}` } : {},
    signal: AbortSignal.timeout(TIMEOUT_MS),
  });
}

function expect(condition: boolean, problem: string): asserts condition {
  if (!condition) throw new Error(problem);
}

async function expectError(response: Response, status: number, code: string): Promise<void> {
  expect(response.status === status, `expected ${status}, got ${response.status}`);
  const parsed = ErrorBody.safeParse(await response.json().catch(() => undefined));
  expect(parsed.success, "the body is not the Error shape {code, message, status}");
  expect(parsed.data.code === code, `expected code ${code}, got ${parsed.data.code}`);
  expect(parsed.data.status === status, `body status ${parsed.data.status} differs from HTTP ${status}`);
}

let listBody = "";

const checks: Check[] = [
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
    async run() {
      const response = await call("GET", "/store/orders", false);
      const challenge = response.headers.get("WWW-Authenticate") ?? "";
      await expectError(response, 401, "missing_api_key");
      expect(challenge.startsWith("Bearer "), `WWW-Authenticate is "${challenge}"`);
      expect(response.headers.has("X-RateLimit-Limit"), "rate-limit headers missing on the 401");
    },
  },
  {
    name: "GET /openapi.json is an OpenAPI 3.1 document with both operations",
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

/** A large id that the list does not contain, so the cancel cannot touch a real order. */
function unusedOrderId(list: string): string {
  for (;;) {
    const id = `9${String(Math.floor(Math.random() * 1e15)).padStart(15, "0")}`;
    if (!new RegExp(`"id":${id}[,}]`).test(list)) return id;
  }
}

let failures = 0;
console.log(`Smoke checks against ${baseUrl}`);
for (const check of checks) {
  try {
    await check.run();
    console.log(`PASS ${check.name}`);
  } catch (error) {
    failures += 1;
    const reason = error instanceof Error ? (error.cause instanceof Error ? `${error.message}: ${error.cause.message}` : error.message) : String(error);
    console.log(`FAIL ${check.name}: ${reason}`);
  }
}
console.log(failures === 0 ? `All ${checks.length} checks passed.` : `${failures} of ${checks.length} checks failed.`);
process.exit(failures === 0 ? 0 : 1);
