import { ORDER_PAGE_SIZE, type FirstOrderPage, type OrderRow } from "../order-queries";

/** Reads the orders after `after` up to `upTo` inclusive; without `upTo`, the next page of at most ORDER_PAGE_SIZE. */
export type PageRead = (after: string, upTo: string | undefined) => Promise<OrderRow[]>;

/** The D1 queries a list makes after its first page: one per page end (rows added later add more). */
export function laterPageQueries(first: FirstOrderPage): number {
  return first.pageEnds.length;
}

/**
 * The list's pages in id order, one per call, then undefined. With the page ends known, `readAhead` later pages are in
 * flight while the caller writes one, so a far D1 costs about 1/(readAhead + 1) of the round trips; after the last page
 * end, pages follow by keyset, so rows added at the end are read too.
 */
export function pagesReadAhead(
  first: FirstOrderPage,
  read: PageRead,
  readAhead: number,
): () => Promise<OrderRow[] | undefined> {
  const ends = first.rows.length < ORDER_PAGE_SIZE ? [] : first.pageEnds;
  let next = 0;
  const inFlight: { rows: Promise<OrderRow[]>; tail: boolean }[] = [{ rows: Promise.resolve(first.rows), tail: false }];

  const start = (after: string, upTo: string | undefined) => {
    const rows = read(after, upTo);
    // Awaited in order later; until then a failure must not count as unhandled.
    rows.catch(() => {});
    inFlight.push({ rows, tail: upTo === undefined });
  };
  const fill = () => {
    while (inFlight.length <= readAhead && next < ends.length) {
      start(ends[next]!, ends[next + 1]);
      next += 1;
    }
  };

  return async () => {
    fill();
    const page = inFlight.shift();
    if (page === undefined) return undefined;
    const rows = await page.rows;
    // A full tail page means rows were added at the end: read on after them.
    if (page.tail && rows.length === ORDER_PAGE_SIZE) start(rows[rows.length - 1]!.id, undefined);
    return rows;
  };
}
