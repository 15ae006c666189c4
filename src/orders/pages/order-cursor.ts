/** v2's page cursors: `<after id>.<filters digest>`, opaque, bound to their filters but not to `limit`. */
import { ApiError } from "../../framework/api-error";
import { isCanonicalInt64 } from "../../lib/int64";
import { cursorDigest, makeCursor, readCursor } from "../../lib/opaque-cursor";
import { canonicalFilters, type OrderFilters } from "./order-filters";

const PURPOSE = "store-orders v2 order cursor 1";

const filtersDigest = (filters: OrderFilters) =>
  cursorDigest(PURPOSE, new URLSearchParams(canonicalFilters(filters)).toString());

/** The cursor of the page that follows the order `afterId`, for these filters. */
export async function encodeCursor(afterId: string, filters: OrderFilters): Promise<string> {
  return makeCursor(PURPOSE, [afterId, await filtersDigest(filters)]);
}

/** The id a cursor continues after; 400 `invalid_cursor` for one not made here or for other filters. */
export async function decodeCursor(cursor: string, filters: OrderFilters): Promise<string> {
  const [afterId, boundTo] = (await readCursor(PURPOSE, cursor, 2)) ?? [];
  if (afterId === undefined || !isCanonicalInt64(afterId)) {
    throw new ApiError(
      "invalid_cursor",
      "cursor is not one this API made: send the nextCursor of the previous page exactly as it was given.",
    );
  }
  if (boundTo !== (await filtersDigest(filters))) {
    throw new ApiError(
      "invalid_cursor",
      "cursor belongs to other filters: send it with the filters of the page it came from, or start again without a " +
        "cursor.",
    );
  }
  return afterId;
}
