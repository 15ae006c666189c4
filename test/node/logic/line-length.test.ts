import { describe, expect, it } from "vitest";
import { tooLong } from "../../../scripts/lib/line-length";

const long = (text: string) => text.padEnd(130, "x");

/** The line-length check (CONTRIBUTING.md#style): 120 columns, a string left whole. */
describe("a line over 120 columns", () => {
  it("is refused as code or as a comment", () => {
    expect(
      tooLong(long("  const answer = await fetch(url, { method: 'POST', body: JSON.stringify(changes) }); // ")),
    ).toBe(true);
    expect(tooLong(long(" * A module's header that runs on "))).toBe(true);
    expect(tooLong(`  throw new ApiError("not_found", "${"x".repeat(60)}", "${"y".repeat(60)}");`)).toBe(true);
  });

  it("is left whole when it is one string, with at most a name before it and punctuation after", () => {
    const text = "x".repeat(125);
    for (const line of [
      `    "${text}" +`,
      `  description: "${text}",`,
      `      .describe("${text}"),`,
      `  summary: \`${text}\`,`,
      `    '${text}';`,
      `  it("${text}", async () => {`,
    ])
      expect(tooLong(line), line).toBe(false);
  });

  it("is refused as code inside a template's placeholder, or with a second string after the first", () => {
    expect(tooLong(`  summary: \`\${await fetch(url).then((response) => response.text())}${"x".repeat(90)}\`,`)).toBe(
      true,
    );
    expect(tooLong(`  pattern: "${"\\d".repeat(60)}" + suffix,`)).toBe(true);
    expect(tooLong(`    "${"x".repeat(60)}" + "${"y".repeat(60)}",`)).toBe(true);
    // An escaped quote does not end the string.
    expect(tooLong(`    "${"x".repeat(60)}\\"${"y".repeat(60)}",`)).toBe(false);
  });

  it("is not long at 120 columns", () => {
    expect(tooLong("x".repeat(120))).toBe(false);
  });
});
