/** RFC 9110 `If-None-Match`, compared weakly; a header off the grammar matches nothing (no unasked 304). */
export function ifNoneMatchMatches(header: string | undefined, etag: string): boolean {
  if (header === undefined) return false;
  const tags = parseIfNoneMatch(header);
  if (tags === "*") return true;
  return tags?.includes(opaqueTag(etag)) ?? false;
}

const isOws = (char: string | undefined) => char === " " || char === "\t";
// etagc = %x21 / %x23-7E / obs-text: visible characters but DQUOTE, and bytes from 0x80.
const isEtagc = (code: number) => code === 0x21 || (code >= 0x23 && code <= 0x7e) || (code >= 0x80 && code <= 0xff);

/** `*`, the opaque tags of the list (empty list elements allowed, as RFC 9110 section 5.6.1 asks), or undefined. */
function parseIfNoneMatch(header: string): "*" | string[] | undefined {
  let end = header.length;
  let start = 0;
  while (isOws(header[start])) start++;
  while (end > start && isOws(header[end - 1])) end--;
  if (header.slice(start, end) === "*") return "*";

  const tags: string[] = [];
  let at = start;
  let expectSeparator = false;
  while (at < end) {
    if (header[at] === ",") {
      at++;
      expectSeparator = false;
    } else if (isOws(header[at])) {
      at++;
    } else if (expectSeparator) {
      return undefined;
    } else {
      if (header.startsWith("W/", at)) at += 2;
      if (header[at] !== '"') return undefined;
      const close = header.indexOf('"', at + 1);
      if (close < 0 || close >= end) return undefined;
      for (let i = at + 1; i < close; i++) if (!isEtagc(header.charCodeAt(i))) return undefined;
      tags.push(header.slice(at, close + 1));
      at = close + 1;
      expectSeparator = true;
    }
  }
  return tags.length > 0 ? tags : undefined;
}

function opaqueTag(etag: string): string {
  return etag.startsWith("W/") ? etag.slice(2) : etag;
}
