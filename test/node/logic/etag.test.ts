import { describe, expect, it } from "vitest";
import { ifNoneMatchMatches } from "../../../src/lib/etag";

describe("ifNoneMatchMatches", () => {
  const etag = '"orders-ab12-7"';

  it.each([
    ['"orders-ab12-7"', true],
    ['W/"orders-ab12-7"', true],
    ['"a", "orders-ab12-7"', true],
    ['"a","orders-ab12-7"', true],
    [' \t"orders-ab12-7" ', true],
    ['"a", , "orders-ab12-7",', true],
    ['"a,b", "orders-ab12-7"', true],
    ["*", true],
    [" * ", true],
    ['"orders-ab12-8"', false],
    ["orders-ab12-7", false],
    ["", false],
    [", ,", false],
    ['"x", *', false],
    ['*, "orders-ab12-7"', false],
    ['garbage, "orders-ab12-7"', false],
    ['"orders-ab12-7" garbage', false],
    ['"orders-ab12-7" "a"', false],
    ['"orders-ab12-7', false],
    ['w/"orders-ab12-7"', false],
    ['"orders ab12-7"', false],
  ])("%j → %s", (header, expected) => {
    expect(ifNoneMatchMatches(header, etag)).toBe(expected);
  });

  it("is false without the header", () => {
    expect(ifNoneMatchMatches(undefined, etag)).toBe(false);
  });

  it("compares weakly against a weak current tag too", () => {
    expect(ifNoneMatchMatches('"v1"', 'W/"v1"')).toBe(true);
  });
});
