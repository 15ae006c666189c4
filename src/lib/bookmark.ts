/** The header a client sends a D1 bookmark back in (docs/api.md#orders). */
export const BOOKMARK_HEADER = "X-D1-Bookmark";

// The format D1 hands out: four hex groups. Checked before it reaches D1, so a
// mangled header is the client's 400, not a D1 error that looks like an outage.
export const BOOKMARK_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{8}-[0-9a-f]{32}$/;

export function isBookmark(value: string): boolean {
  return BOOKMARK_PATTERN.test(value);
}

/**
 * The newer of two bookmarks (either may be absent). D1's bookmarks sort
 * oldest to newest as strings (D1's Time Travel documentation), so reading
 * at least as new as the newer one honours both.
 */
export function newerBookmark(a: string | undefined, b: string | undefined): string | undefined {
  if (a === undefined) return b;
  if (b === undefined) return a;
  return a > b ? a : b;
}
