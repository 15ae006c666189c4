/**
 * JSON.parse turns every number into a double, which rounds integers above
 * 2^53: ids 9007199254740993 and 9007199254740992 both become the second.
 * This quotes the integer values of the named keys before parsing, so they
 * arrive as their exact decimal strings. It walks the text once, minding
 * strings and escapes, so a key name inside a string value is never touched.
 */
export function parseWithExactIntegers(text: string, keys: ReadonlySet<string>): unknown {
  let out = "";
  let copiedTo = 0;
  let lastString: string | undefined;
  let key: string | undefined;
  for (let i = 0; i < text.length; i++) {
    const char = text[i]!;
    if (char === '"') {
      const start = i;
      for (i++; i < text.length && text[i] !== '"'; i++) if (text[i] === "\\") i++;
      lastString = text.slice(start, i + 1);
      continue;
    }
    if (char === ":") {
      key = lastString === undefined ? undefined : (JSON.parse(lastString) as string);
      continue;
    }
    if (char === "-" || (char >= "0" && char <= "9")) {
      let end = i + 1;
      while (end < text.length && /[0-9.eE+-]/.test(text[end]!)) end++;
      const number = text.slice(i, end);
      if (key !== undefined && keys.has(key) && /^-?(0|[1-9][0-9]*)$/.test(number)) {
        out += `${text.slice(copiedTo, i)}"${number}"`;
        copiedTo = end;
      }
      i = end - 1;
    }
    if (char === "," || char === "{" || char === "[") key = undefined;
  }
  return JSON.parse(out + text.slice(copiedTo));
}
