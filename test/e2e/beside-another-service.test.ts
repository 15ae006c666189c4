import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { useKeysCommand } from "../support/npm-script";
import { useService, useSharedService } from "../support/service-fixture";
import { SYNTHETIC_ORDERS } from "../support/shared-service";

/**
 * A developer's own `npm start` (another state, another port) serving traffic
 * while the e2e checks list the shared 100,000-order service, as a machine
 * with the project open in another terminal has it. Every list must be
 * whole: a list cut short anywhere (a client gone away, a failed read) must
 * never be kept or served again (docs/design/order-list.md#the-cache).
 */
const shared = useSharedService();
const keys = useKeysCommand(() => shared.statePath);
const other = useService();

const ORDERS = 37 + SYNTHETIC_ORDERS;
let traffic: { stop(): Promise<number> } | undefined;

/**
 * Lists, pages and cancels against the other service, about ten requests a second, until stopped; counts the answers.
 */
function serveTraffic(call: (path: string, init?: RequestInit) => Promise<Response>) {
  let running = true;
  let answered = 0;
  const loop = (async () => {
    for (let i = 0; running; i++) {
      const paths = ["/v1/store/orders", "/v2/store/orders?status=pending&limit=5", `/v1/store/orders/${1 + (i % 36)}`];
      const path = paths[i % paths.length]!;
      const response = await call(path, path.endsWith("orders") || path.includes("?") ? {} : { method: "DELETE" });
      await response.arrayBuffer();
      answered += 1;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  })();
  return {
    async stop() {
      running = false;
      await loop;
      return answered;
    },
  };
}

/**
 * The shared service's whole v1 list, as a client reads it: the number of orders, or the JSON error of a cut-short
 * body.
 */
async function listLength(authorization?: string): Promise<number> {
  const response = await shared.current.call(
    "/v1/store/orders",
    authorization ? { headers: { Authorization: authorization } } : {},
  );
  expect(response.status).toBe(200);
  return (JSON.parse(await response.text()) as unknown[]).length;
}

describe("the e2e list checks beside another npm start serving traffic", () => {
  beforeAll(() => {
    traffic = serveTraffic((path, init) => other.current.call(path, init));
  });
  afterAll(async () => {
    await traffic?.stop();
  });

  it("lists the whole shared list, again and again, with the demo key and with a key the keys command made on the shared state", async () => {
    for (let i = 0; i < 3; i++) expect(await listLength()).toBe(ORDERS);
    const created = await keys.run("create", "--plan", "pro", "--json");
    expect(created.status).toBe(0);
    const { key } = JSON.parse(created.stdout) as { key: string };
    expect(await listLength(`Bearer ${key}`)).toBe(ORDERS);
  });

  it("keeps nothing of a list whose client went away part-way, so the next lists are whole", async () => {
    // A cancel makes a new version: the next list is read from D1 and filled into the cache as it streams.
    expect((await shared.current.call("/v1/store/orders/9007199254740997", { method: "DELETE" })).status).toBe(204);
    const abort = new AbortController();
    const gone = await shared.current.call("/v1/store/orders", { signal: abort.signal });
    const reader = gone.body!.getReader();
    await reader.read();
    abort.abort();
    await reader.cancel().catch(() => {});
    for (let i = 0; i < 3; i++) expect(await listLength()).toBe(ORDERS);
  });

  it("walks v2 pages of the shared service whole: every pending order of the v1 list, once, to the last page", async () => {
    const listed = JSON.parse(await (await shared.current.call("/v1/store/orders")).text()) as { status: string }[];
    const pending = listed.filter((order) => order.status === "pending").length;
    // Ids are compared as the text they are sent as: past 2^53, JSON.parse would merge neighbours.
    const ids = new Set<string>();
    let walked = 0;
    let path: string | undefined = "/v2/store/orders?status=pending&limit=1000";
    for (let page = 0; path; page++) {
      expect(page).toBeLessThan(Math.ceil(pending / 1000) + 1);
      const response = await shared.current.call(path);
      expect(response.status).toBe(200);
      const text = await response.text();
      const pageIds = [...text.matchAll(/"id":"?(\d+)/g)].map((match) => match[1]!);
      walked += pageIds.length;
      for (const id of pageIds) ids.add(id);
      const { nextCursor } = JSON.parse(text) as { nextCursor: string | null };
      path = nextCursor ? `/v2/store/orders?status=pending&limit=1000&cursor=${nextCursor}` : undefined;
    }
    expect(pending).toBeGreaterThan(20_000);
    expect(walked).toBe(pending);
    expect(ids.size).toBe(pending);
  });

  it("while the other service answered its own traffic", async () => {
    expect(await traffic!.stop()).toBeGreaterThan(10);
  });
});
