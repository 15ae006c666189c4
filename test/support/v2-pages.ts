import { expect } from "vitest";
import { api } from "./request";

/**
 * v2's order list as a client reads it (docs/api.md#v2-filtering-and-pagination): pages, their ids, a walk of every
 * page.
 */
export interface ListedOrder {
  id: number | string;
  petId?: number | string;
  quantity?: number;
  shipDate?: string;
  status: string;
  complete: boolean;
}
export interface Page {
  data: ListedOrder[];
  nextCursor: string | null;
}

export const STATUSES = ["pending", "shipped", "delivered", "cancelled"] as const;

/** The ids of a page, which v2 writes as strings of decimal digits (docs/api.md#int64-ids-in-v2). */
export const idsOf = (body: string) => [...body.matchAll(/"id":"(-?\d+)"/g)].map((match) => match[1]!);

export async function page(
  query: string,
  init: RequestInit = {},
): Promise<{ response: Response; body: string; page: Page }> {
  const response = await api(`/v2/store/orders${query ? `?${query}` : ""}`, init);
  const body = await response.clone().text();
  return {
    response,
    body,
    page: response.status === 200 ? (JSON.parse(body) as Page) : { data: [], nextCursor: null },
  };
}

/** Walks every page of `query` with `limit`, calling `between` after each, and returns the ids in order. */
export async function walk(
  query: string,
  limit: number,
  between: () => Promise<void> = async () => {},
): Promise<string[]> {
  const ids: string[] = [];
  let cursor: string | null = null;
  for (let pages = 0; pages < 10_000; pages++) {
    const params = new URLSearchParams(query);
    params.set("limit", String(limit));
    if (cursor) params.set("cursor", cursor);
    const { response, body, page: current } = await page(params.toString());
    expect(response.status).toBe(200);
    expect(current.data.length).toBeLessThanOrEqual(limit);
    ids.push(...idsOf(body));
    cursor = current.nextCursor;
    if (cursor === null) return ids;
    await between();
  }
  throw new Error("the walk did not end");
}
