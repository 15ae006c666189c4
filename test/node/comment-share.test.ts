import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { tsFilesUnder } from "../support/source-files";

/**
 * Prose costs reading (CONTRIBUTING.md#style): a comment says what and the one reason why, and figures and history
 * go to the bench, the design docs or git. Held as a share of the Worker's lines so it cannot creep back.
 */
const MAX_COMMENT_SHARE = 0.12;

/** Lines that are wholly comment: `//` lines and every line of a block comment; a comment after code is not. */
function commentLines(text: string): number {
  let count = 0;
  let inBlock = false;
  for (const line of text.split("\n").map((raw) => raw.trim())) {
    if (inBlock) {
      count += 1;
      inBlock = !line.includes("*/");
    } else if (line.startsWith("//")) count += 1;
    else if (line.startsWith("/*")) {
      count += 1;
      inBlock = !line.includes("*/");
    }
  }
  return count;
}

describe("comment share", () => {
  it("counts whole comment lines only", () => {
    const text = ["/**", " * What.", " */", "const a = 1; // why", "// why", "/* one */", "const b = 2;"].join("\n");
    expect(commentLines(text)).toBe(5);
  });

  it(`keeps comment lines at most ${MAX_COMMENT_SHARE * 100}% of src`, () => {
    const texts = tsFilesUnder("src").map((path) => readFileSync(path, "utf8"));
    const lines = texts.reduce((sum, text) => sum + text.split("\n").length, 0);
    const comments = texts.reduce((sum, text) => sum + commentLines(text), 0);
    expect(comments / lines, `${comments} of ${lines} lines`).toBeLessThanOrEqual(MAX_COMMENT_SHARE);
  });
});
