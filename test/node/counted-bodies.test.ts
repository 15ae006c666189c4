import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";

/**
 * The request analytics point reports the bytes of every body
 * (docs/operations.md#request-analytics), which only what writes a body can
 * count: src writes bodies through counted-body.ts, never through Hono's
 * uncounted writers. A streamed body sets `bodyBytes` itself (the order list).
 */
function sourceFiles(dir: string): string[] {
  return readdirSync(dir).flatMap((entry) => {
    const path = join(dir, entry);
    return statSync(path).isDirectory() ? sourceFiles(path) : path.endsWith(".ts") ? [path] : [];
  });
}

const UNCOUNTED = /\bc\.(?:json|text|html)\(|\bc\.body\((?!null\b)/g;

describe("bodies the API writes", () => {
  it("are counted: written through counted-body.ts, or streamed with their size reported", () => {
    const uncounted = sourceFiles("src").flatMap((file) => {
      const text = readFileSync(file, "utf8");
      return [...text.matchAll(UNCOUNTED)]
        .filter(
          (match) =>
            !(
              file.endsWith("counted-body.ts") ||
              /c\.set\("bodyBytes", [^)]+\);\s*return $/.test(text.slice(0, match.index))
            ),
        )
        .map((match) => `${file}: ${text.slice(match.index, text.indexOf("\n", match.index))}`);
    });
    expect(uncounted).toEqual([]);
  });

  it("are checked by a search that finds an uncounted writer", () => {
    expect("return c.json({ a: 1 });".match(UNCOUNTED)).toHaveLength(1);
    expect("return c.body(text, 200);".match(UNCOUNTED)).toHaveLength(1);
    expect("return c.body(null, 304, headers);".match(UNCOUNTED)).toBeNull();
  });
});
