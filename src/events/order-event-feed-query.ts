/** The event feed's query, read strictly; `after` is a position, bound to no filter. */
import { ApiError } from "../framework/api-error";
import { readCursor, makeCursor } from "../lib/opaque-cursor";
import { oneOrMoreOf, plainWholeNumber, strictQuery } from "../framework/operations/strict-query";
import { ORDER_EVENT_TYPES, type OrderEventType } from "./order-event-schemas";

export const DEFAULT_EVENT_LIMIT = 100;
export const MAX_EVENT_LIMIT = 1000;
/** The longest a request may wait for an event, in seconds. */
export const MAX_WAIT_SECONDS = 20;

export const FEED_PARAMETERS = {
  after:
    "the nextCursor of the previous page, as it was given (without it, the oldest event kept); latest: after the " +
    "newest event now, to follow only what comes next",
  types: `one or more of ${ORDER_EVENT_TYPES.join(", ")}, comma-separated`,
  limit: `a whole number from 1 to ${MAX_EVENT_LIMIT} (default ${DEFAULT_EVENT_LIMIT})`,
  wait:
    `a whole number of seconds from 0 to ${MAX_WAIT_SECONDS} (default 0): how long to hold an empty page open for ` +
    `the next event`,
} as const;

export interface FeedQuery {
  /** The sequence to continue after; undefined: from the oldest kept; "latest": after the newest now. */
  after?: string;
  types?: OrderEventType[];
  limit: number;
  waitSeconds: number;
}

const PURPOSE = "store-orders v2 order event cursor 1";

/** The cursor of the position after the event `seq`. */
export const feedCursor = (seq: string) => makeCursor(PURPOSE, [seq]);

export async function readFeedQuery(search: URLSearchParams): Promise<FeedQuery> {
  const { value, invalid } = strictQuery(search, FEED_PARAMETERS);
  const query: FeedQuery = { limit: DEFAULT_EVENT_LIMIT, waitSeconds: 0 };
  const after = value("after");
  if (after === "latest") query.after = "latest";
  else if (after !== undefined) {
    const [seq] = (await readCursor(PURPOSE, after, 1)) ?? [];
    if (seq === undefined || !/^(0|[1-9][0-9]{0,18})$/.test(seq)) {
      throw new ApiError(
        "invalid_cursor",
        "after is not a cursor this API made: send the nextCursor of a page of this feed exactly as it was given.",
      );
    }
    query.after = seq;
  }
  const types = value("types");
  if (types !== undefined) {
    const listed = oneOrMoreOf(types, ORDER_EVENT_TYPES);
    if (!listed) throw invalid("types", types);
    query.types = listed;
  }
  for (const [name, min, max, field] of [
    ["limit", 1, MAX_EVENT_LIMIT, "limit"],
    ["wait", 0, MAX_WAIT_SECONDS, "waitSeconds"],
  ] as const) {
    const text = value(name);
    if (text === undefined) continue;
    const number = plainWholeNumber(text, min, max);
    if (number === undefined) throw invalid(name, text);
    query[field] = number;
  }
  return query;
}
