/**
 * The longest a line may be (120 columns, Biome's), and the lines left longer because breaking them would only
 * scatter one string: a test's name, and a line that is one string literal (a description, a message, part of a
 * statement), with at most a name before it and punctuation after.
 */
export const MAX_COLUMNS = 120;

const TEST_NAME = /^\s*(it|test|describe)(\.\w+(\([^)]*\))*)*\((["'`]).*\4,( async)? \(/;
const NAME_BEFORE = /^\s*(?:[\w$.]+\s*[:=(]\s*)?/;
const PUNCTUATION_AFTER = /^[\s,;+)]*$/;

/** Whether `line` is one string literal, read in one pass: a template with `${…}` in it is code, not a string. */
function isOneString(line: string): boolean {
  let at = NAME_BEFORE.exec(line)![0].length;
  const quote = line[at];
  if (quote !== '"' && quote !== "'" && quote !== "`") return false;
  for (at += 1; at < line.length; at += 1) {
    const char = line[at];
    if (char === "\\") at += 1;
    else if (quote === "`" && char === "$" && line[at + 1] === "{") return false;
    else if (char === quote) return PUNCTUATION_AFTER.test(line.slice(at + 1));
  }
  return false;
}

export const tooLong = (line: string): boolean =>
  line.length > MAX_COLUMNS && !TEST_NAME.test(line) && !isOneString(line);
