import { describe, expect, it } from "vitest";
import { pagesReadAhead, laterPageQueries } from "../../../src/orders/whole-list/list-read-ahead";
import { ORDER_PAGE_SIZE, type OrderRow } from "../../../src/orders/order-queries";

const row = (id: number): OrderRow => ({
  id: String(id),
  petId: null,
  quantity: null,
  shipDate: null,
  status: "pending",
  complete: 0,
});

/** A table of ids 1..count, read through a fake D1 that answers when told and records what is in flight. */
function table(count: number) {
  const ids = Array.from({ length: count }, (_, i) => i + 1);
  const waiting: (() => void)[] = [];
  let inFlight = 0;
  let maxInFlight = 0;
  const read = (after: string, upTo: string | undefined) => {
    inFlight += 1;
    maxInFlight = Math.max(maxInFlight, inFlight);
    const rows = ids.filter((id) => id > Number(after) && (upTo === undefined || id <= Number(upTo)));
    return new Promise<OrderRow[]>((resolve) =>
      waiting.push(() => {
        inFlight -= 1;
        resolve((upTo === undefined ? rows.slice(0, ORDER_PAGE_SIZE) : rows).map(row));
      }),
    );
  };
  const first = {
    version: "v",
    rows: ids.slice(0, ORDER_PAGE_SIZE).map(row),
    pageEnds: ids.filter((id) => id % ORDER_PAGE_SIZE === 0).map(String),
  };
  return { ids, first, read, waiting, maxInFlight: () => maxInFlight, inFlight: () => inFlight };
}

/** Every page, answering the fake D1 whenever the reader waits. */
async function drain(next: () => Promise<OrderRow[] | undefined>, answer: () => void): Promise<string[]> {
  const seen: string[] = [];
  for (;;) {
    const pending = next();
    let page: OrderRow[] | undefined;
    for (let settled = false; !settled; ) {
      answer();
      page = await Promise.race([pending, new Promise<"wait">((resolve) => setTimeout(() => resolve("wait"), 0))]).then(
        (value) => {
          if (value === "wait") return undefined;
          settled = true;
          return value;
        },
      );
    }
    if (page === undefined) return seen;
    seen.push(...page.map((order) => order.id));
  }
}

describe("pagesReadAhead", () => {
  it.each([0, 1, 999, 1_000, 1_001, 3_000, 4_321])(
    "reads %i orders exactly once each, in order, with any read-ahead",
    async (count) => {
      for (const readAhead of [0, 1, 2, 5]) {
        const t = table(count);
        const ids = await drain(pagesReadAhead(t.first, t.read, readAhead), () => t.waiting.shift()?.());
        expect(ids).toEqual(t.ids.map(String));
        expect(t.maxInFlight()).toBeLessThanOrEqual(Math.max(readAhead, 1));
      }
    },
  );

  it("has `readAhead` pages in flight while the caller writes one, and none without read-ahead", async () => {
    const t = table(5_000);
    const next = pagesReadAhead(t.first, t.read, 2);
    await next();
    expect(t.inFlight()).toBe(2);
    const t0 = table(5_000);
    await pagesReadAhead(t0.first, t0.read, 0)();
    expect(t0.inFlight()).toBe(0);
  });

  it("reads on past the last page end when rows were added at the end while streaming", async () => {
    const t = table(2_000);
    // The page ends were read when there were 1,000 orders; 1,000 more arrived since.
    const stale = { ...t.first, pageEnds: ["1000"] };
    const ids = await drain(pagesReadAhead(stale, t.read, 1), () => t.waiting.shift()?.());
    expect(ids).toEqual(t.ids.map(String));
  });

  it("counts one query per page end for the account", () => {
    expect(laterPageQueries(table(999).first)).toBe(0);
    expect(laterPageQueries(table(1_000).first)).toBe(1);
    expect(laterPageQueries(table(100_000).first)).toBe(100);
  });
});
