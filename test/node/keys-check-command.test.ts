import { describe, expect, it } from "vitest";
import { runKeysCommand } from "../../scripts/keys";
import { generateApiKey } from "../../src/keys/issue-key";

/** `npm run keys -- check <token>`: offline, no store opened, no service asked. */
async function check(token: string): Promise<{ status: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const status = await runKeysCommand(["check", token], {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
  });
  return { status, out: out.join("\n"), err: err.join("\n") };
}

describe("npm run keys -- check", () => {
  it("says a new key is well formed", async () => {
    expect(await check(generateApiKey("so_live_"))).toMatchObject({
      status: 0,
      out: "A well-formed key: its checksum holds.",
    });
  });

  it("refuses 32 characters without a checksum: no key of that shape was ever issued", async () => {
    expect(await check(`so_test_${"a".repeat(32)}`)).toMatchObject({ status: 1 });
  });

  it.each([
    [
      "a mistyped character",
      (key: string) => key.slice(0, 10) + (key[10] === "a" ? "b" : "a") + key.slice(11),
      /checksum .* does not match/,
    ],
    ["a character missing", (key: string) => key.slice(0, -1), /37 characters after its prefix, not 38/],
    [
      "another prefix",
      (key: string) => key.replace("so_live_", "sk_live_"),
      /does not start with so_live_ or so_test_/,
    ],
    ["a character outside base62", (key: string) => `${key.slice(0, -1)}-`, /characters other than letters and digits/],
  ])("refuses a key with %s, saying why, exit 1", async (_, spoil, why) => {
    const result = await check(spoil(generateApiKey("so_live_")));
    expect(result.status).toBe(1);
    expect(result.err).toMatch(why);
  });
});
