/**
 * The longest a line may be (120 columns, Biome's), and the lines left longer because breaking them would only
 * scatter one string: a test's name, and a line that is one string literal (a description, a message, part of a
 * statement), with at most a name before it and punctuation after.
 */
export const MAX_COLUMNS = 120;

const TEST_NAME = /^\s*(it|test|describe)(\.\w+(\([^)]*\))*)*\((["'`]).*\4,( async)? \(/;
const ONE_STRING = /^\s*(?:[\w$.]+\s*[:=(]\s*)?(["'`])(?:\\.|(?!\1).)*\1[\s,;+)]*$/;

export const tooLong = (line: string): boolean =>
  line.length > MAX_COLUMNS && !TEST_NAME.test(line) && !ONE_STRING.test(line);
