import { describe, expect, it } from "vitest";
import { ifNoneMatchMatches } from "../src/lib/etag";

describe("ifNoneMatchMatches", () => {
  const etag = '"orders-ab12-7"';

  it.each([
    ['"orders-ab12-7"', true],
    ['W/"orders-ab12-7"', true],
    ['"a", "orders-ab12-7"', true],
    ["*", true],
    ['"orders-ab12-8"', false],
    ["orders-ab12-7", false],
    ["", false],
  ])("%j → %s", (header, expected) => {
    expect(ifNoneMatchMatches(header, etag)).toBe(expected);
  });

  it("is false without the header", () => {
    expect(ifNoneMatchMatches(undefined, etag)).toBe(false);
  });
});
