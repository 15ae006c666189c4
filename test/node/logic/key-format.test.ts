import { readFileSync } from "node:fs";
import { crc32 as zlibCrc32 } from "node:zlib";
import { describe, expect, it } from "vitest";
import { fc, test } from "@fast-check/vitest";
import { BASE62, KEY_PATTERN_SOURCE, crc32, keyChecksum, isWellFormedKey } from "../../../src/keys/key-format";
import { generateApiKey } from "../../../src/keys/issue-key";

const base62 = fc.string({ unit: fc.constantFrom(...BASE62), minLength: 32, maxLength: 32 });
const prefix = fc.constantFrom("so_live_", "so_test_");

describe("the key format's checksum", () => {
  it("is CRC-32 (IEEE) as zlib computes it: the check value of '123456789' is cbf43926", () => {
    expect(crc32("123456789")).toBe(0xcbf43926);
    expect(crc32("")).toBe(0);
  });

  test.prop([fc.string({ unit: fc.integer({ min: 0, max: 127 }).map((code) => String.fromCharCode(code)) })])(
    "matches zlib's CRC-32 on any ASCII string",
    (text) => {
      expect(crc32(text)).toBe(zlibCrc32(text));
    },
  );

  it("writes the CRC in base62, left-padded with 0 to 6 characters", () => {
    // The largest CRC (2^32 - 1) is 4lFJfS in base62; a small one pads.
    const value = crc32("so_test_");
    let decoded = 0;
    for (const digit of keyChecksum("so_test_")) decoded = decoded * 62 + BASE62.indexOf(digit);
    expect(decoded).toBe(value);
    expect(keyChecksum("so_test_")).toHaveLength(6);
  });

  test.prop([prefix, base62])(
    "accepts every key made with its checksum, and only its own checksum",
    (start, random) => {
      const key = start + random + keyChecksum(start + random);
      expect(isWellFormedKey(key)).toBe(true);
      expect(new RegExp(`^${KEY_PATTERN_SOURCE}$`).test(key)).toBe(true);
      const other = key.slice(0, -1) + (key.endsWith("0") ? "1" : "0");
      expect(isWellFormedKey(other)).toBe(false);
    },
  );

  test.prop([prefix, base62, fc.integer({ min: 8, max: 39 }), fc.constantFrom(...BASE62)])(
    "catches any one character changed",
    (start, random, at, replacement) => {
      const key = start + random + keyChecksum(start + random);
      fc.pre(key[at] !== replacement);
      expect(isWellFormedKey(key.slice(0, at) + replacement + key.slice(at + 1))).toBe(false);
    },
  );

  it("refuses every other length, the 32 characters of a shape never issued included", () => {
    expect(isWellFormedKey("so_live_0123456789abcdefghijABCDEFGHIJKL")).toBe(false);
    expect(isWellFormedKey("so_live_0123456789abcdefghijABCDEFGHIJK")).toBe(false);
    expect(isWellFormedKey("so_live_0123456789abcdefghijABCDEFGHIJKLMNOPQ")).toBe(false);
    expect(isWellFormedKey("so_prod_0123456789abcdefghijABCDEFGHIJKL")).toBe(false);
  });

  it("is the pattern docs/api.md gives secret scanners", () => {
    const docs = readFileSync("docs/api.md", "utf8");
    expect(docs).toContain(`\`\`\`\n${KEY_PATTERN_SOURCE}\n\`\`\``);
    expect(docs).toContain(`regex = '''\\b${KEY_PATTERN_SOURCE}\\b'''`);
  });

  it("is the pattern the console's sign-in form asks for", () => {
    expect(readFileSync("web/console/views/key-sign-in.tsx", "utf8")).toContain(
      `const KEY_PATTERN = "${KEY_PATTERN_SOURCE}";`,
    );
  });

  it("is what new keys are made in", () => {
    for (let i = 0; i < 200; i++) expect(isWellFormedKey(generateApiKey("so_test_"))).toBe(true);
  });
});
