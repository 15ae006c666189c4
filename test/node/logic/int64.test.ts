import { describe, expect, it } from "vitest";
import { isCanonicalInt64, isCanonicalSafeInteger } from "../../../src/lib/int64";

describe("isCanonicalInt64", () => {
  it.each(["0", "1", "42", "-1", "-0", "9223372036854775807", "-9223372036854775808"])("accepts %s", (text) => {
    expect(isCanonicalInt64(text)).toBe(true);
  });

  it.each([
    "",
    "-",
    "007",
    "00",
    "+1",
    "1.5",
    "1e3",
    " 1",
    "1 ",
    "abc",
    "0x10",
    "9223372036854775808",
    "-9223372036854775809",
    "9999999999999999999",
    "-9999999999999999999",
    "١٢",
  ])("rejects %j", (text) => {
    expect(isCanonicalInt64(text)).toBe(false);
  });

  it("rejects very long digit strings without parsing them", () => {
    expect(isCanonicalInt64("1".repeat(100_000))).toBe(false);
  });
});

describe("isCanonicalSafeInteger", () => {
  it.each(["0", "-1", "9007199254740991", "-9007199254740991"])("accepts %s", (text) => {
    expect(isCanonicalSafeInteger(text)).toBe(true);
  });

  it.each(["9007199254740992", "-9007199254740992", "1.5", "007", "", "1e3", "99999999999999999999"])(
    "rejects %j",
    (text) => {
      expect(isCanonicalSafeInteger(text)).toBe(false);
    },
  );
});
