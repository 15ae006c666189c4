/** The header a client sends a D1 bookmark back in (docs/api.md#orders). */
export const BOOKMARK_HEADER = "X-D1-Bookmark";

// D1's bookmark format, checked first so a mangled header is a 400, not an error that looks like an outage.
export const BOOKMARK_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

export function isBookmark(value: string): boolean {
  return BOOKMARK_PATTERN.test(value);
}

/** The newer of two bookmarks: D1's sort as strings, so reading at the newer honours both. */
export function newerBookmark(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}
