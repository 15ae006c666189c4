/**
 * v2's page cursors (docs/api.md#v2-filtering-and-pagination): where the
 * next page starts (after an order id) and which filters it belongs to,
 * opaque to clients. Base64url of `<after id>.<filters digest>.<check>`: the
 * check makes a cursor this API did not make (mistyped, truncated, from
 * elsewhere) a 400, never a silent restart; the digest binds it to its
 * filters. It only ever says where to continue, so there is nothing secret in
 * it to protect; a changed `limit` keeps it valid.
 */
import { ApiError } from "../api-error";
import { sha256Hex } from "../lib/digest";
import { isCanonicalInt64 } from "../lib/int64";
import { canonicalFilters, type OrderFilters } from "./order-filters";

const PURPOSE = "store-orders v2 order cursor 1";

const digest = (text: string) => sha256Hex(`${PURPOSE}\n${text}`, 9);

const filtersDigest = (filters: OrderFilters) => digest(new URLSearchParams(canonicalFilters(filters)).toString());

/** Every cursor this API makes is base64url of at most 200 characters: the document says so, and anything else is refused unread. */
export const CURSOR_PATTERN = "^[A-Za-z0-9_-]{1,200}$";
const CURSOR = new RegExp(CURSOR_PATTERN);

const base64url = (text: string) => btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
function fromBase64url(text: string): string | undefined {
  if (!CURSOR.test(text)) return undefined;
  try {
    return atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return undefined;
  }
}

/** The cursor of the page that follows the order `afterId`, for these filters. */
export async function encodeCursor(afterId: string, filters: OrderFilters): Promise<string> {
  const payload = `${afterId}.${await filtersDigest(filters)}`;
  return base64url(`${payload}.${await digest(payload)}`);
}

/** The order id a cursor continues after; 400 `invalid_cursor` for one this API did not make, or made for other filters. */
export async function decodeCursor(cursor: string, filters: OrderFilters): Promise<string> {
  const [afterId, boundTo, check, ...rest] = fromBase64url(cursor)?.split(".") ?? [];
  const made = afterId !== undefined && rest.length === 0 && isCanonicalInt64(afterId) && check === (await digest(`${afterId}.${boundTo}`));
  if (!made) throw new ApiError("invalid_cursor", "cursor is not one this API made: send the nextCursor of the previous page exactly as it was given.");
  if (boundTo !== (await filtersDigest(filters))) {
    throw new ApiError("invalid_cursor", "cursor belongs to other filters: send it with the filters of the page it came from, or start again without a cursor.");
  }
  return afterId;
}
