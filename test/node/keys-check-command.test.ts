import { describe, expect, it } from "vitest";
import { runKeysCommand } from "../../scripts/keys";
import { generateApiKey } from "../../src/keys/issue-key";

/** `npm run keys -- check < file`: offline, no store opened, no service asked. */
async function check(token: string, argv = ["check"]): Promise<{ status: number; out: string; err: string }> {
  const out: string[] = [];
  const err: string[] = [];
  const status = await runKeysCommand(argv, {
    out: (line) => out.push(line),
    err: (line) => err.push(line),
    input: async () => `${token}\n`,
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

  it("reads the key from standard input only: as an argument it would stay in ps and the shell's history", async () => {
    const key = generateApiKey("so_live_");
    const argued = await check("", ["check", key]);
    expect(argued).toMatchObject({ status: 1, out: "" });
    expect(argued.err).toContain("never an argument");
    expect(argued.err).not.toContain(key);
    expect(await check("")).toMatchObject({ status: 1 });
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
