import type { Context } from "hono";
import { ApiError } from "../framework/api-error";
import type { AppEnv } from "../framework/app-env";
import { BOOKMARK_HEADER, isBookmark } from "../lib/bookmark";

/** The client's bookmark, if it sent one; a malformed one is refused rather than silently dropped. */
export function bookmarkOf(c: Context<AppEnv>): string | undefined {
  const bookmark = c.req.header(BOOKMARK_HEADER);
  if (bookmark !== undefined && !isBookmark(bookmark)) {
    throw new ApiError("invalid_bookmark", `${BOOKMARK_HEADER} must be a bookmark exactly as this API returned it.`);
  }
  return bookmark;
}

/** The session's bookmark for the response, when D1 gave one. */
export function bookmarkHeader(session: D1DatabaseSession): Record<string, string> {
  const bookmark = session.getBookmark();
  return bookmark === null ? {} : { [BOOKMARK_HEADER]: bookmark };
}
