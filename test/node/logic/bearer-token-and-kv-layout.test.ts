import { describe, expect, it } from "vitest";
import { generateApiKey, generateKeyId } from "../../../src/keys/issue-key";
import { parseBearer } from "../../../src/keys/bearer";
import { keyChecksum } from "../../../src/keys/key-format";
import { keyEntries } from "../../../src/keys/kv-layout";
import { sha256Hex } from "../../../src/lib/digest";

describe("parseBearer", () => {
  const unchecked = "so_live_0123456789abcdefghijABCDEFGHIJKL";
  const checksummed = `${unchecked}${keyChecksum(unchecked)}`;
  const key = checksummed;
  const mistyped = checksummed.slice(0, 20) + (checksummed[20] === "x" ? "y" : "x") + checksummed.slice(21);

  it.each([
    [undefined, { kind: "missing" }],
    [`Bearer ${checksummed}`, { kind: "token", token: checksummed }],
    [`Bearer ${mistyped}`, { kind: "malformed" }],
    ["", { kind: "missing" }],
    ["Bearer", { kind: "missing" }],
    ["Basic abc", { kind: "missing" }],
    ["Bearerso_live_x", { kind: "missing" }],
    [`Bearer ${key}`, { kind: "token", token: key }],
    [`bEaReR   ${key}`, { kind: "token", token: key }],
    [`Bearer ${key} `, { kind: "malformed" }],
    [`Bearer ${key}, Bearer ${key}`, { kind: "malformed" }],
    ["Bearer so_live_short", { kind: "malformed" }],
    [`Bearer ${unchecked}`, { kind: "malformed" }],
    [`Bearer ${key}\u00e9`, { kind: "malformed" }],
  ])("%j → %j", (header, expected) => {
    expect(parseBearer(header)).toEqual(expected);
  });
});

describe("key material", () => {
  it("makes keys with the environment's prefix, 32 base62 characters and a 6-character checksum", () => {
    expect(generateApiKey("so_live_")).toMatch(/^so_live_[0-9A-Za-z]{38}$/);
    expect(generateApiKey("so_test_")).toMatch(/^so_test_[0-9A-Za-z]{38}$/);
    expect(generateKeyId()).toMatch(/^key_[0-9A-Za-z]{16}$/);
    expect(new Set(Array.from({ length: 1000 }, () => generateApiKey("so_test_"))).size).toBe(1000);
  });

  it("uses every base62 character", () => {
    const seen = new Set(Array.from({ length: 200 }, () => generateApiKey("so_test_").slice(8, 40)).join(""));
    expect(seen.size).toBe(62);
  });

  it("hashes with SHA-256 as lowercase hex", async () => {
    expect(await sha256Hex("abc")).toBe("ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
  });

  it("stores a key as a record under its hash, an id entry pointing back, and an entry under its budget", () => {
    const record = { id: "key_0123456789abcdef", plan: "free" as const, name: "n", createdAt: "2026-01-01T00:00:00Z" };
    expect(keyEntries("ab12", record)).toEqual([
      { key: "budget:key_0123456789abcdef:key_0123456789abcdef", value: "", metadata: {} },
      { key: "key:ab12", value: JSON.stringify(record) },
      {
        key: "id:key_0123456789abcdef",
        value: "ab12",
        metadata: { plan: "free", name: "n", createdAt: "2026-01-01T00:00:00Z" },
      },
    ]);
    const rotated = {
      ...record,
      id: "key_fedcba9876543210",
      budget: "key_0123456789abcdef",
      revokedAt: "2026-02-01T00:00:00Z",
    };
    expect(keyEntries("cd34", rotated)[0]).toEqual({
      key: "budget:key_0123456789abcdef:key_fedcba9876543210",
      value: "",
      metadata: { revokedAt: "2026-02-01T00:00:00Z" },
    });
  });
});
