import { describe, expect, it } from "vitest";
import { generateApiKey, generateKeyId } from "../../../src/keys/issue-key";
import { keyChecksum, parseBearer } from "../../../src/keys/key-format";
import { storeKeyPointer } from "../../../src/keys/kv-layout";
import { sha256Hex } from "../../../src/lib/digest";
import { ApiKeyRecord, revoked } from "../../../src/account/key-record";

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

  it("stores a key as a pointer to its id and account under its hash, and its account under its id", async () => {
    const writes: [string, string, unknown?][] = [];
    const kv = {
      put: async (name: string, value: string, options?: { metadata?: unknown }) =>
        void writes.push([name, value, options]),
    };
    const record = {
      id: "key_fedcba9876543210",
      plan: "free" as const,
      name: "n",
      createdAt: "2026-01-01T00:00:00Z",
      scopes: [],
    };
    const rotated = { ...record, budget: "key_0123456789abcdef" };
    await storeKeyPointer(kv, "cd34", rotated);
    expect(writes).toEqual([
      ["key:cd34", JSON.stringify({ keyId: "key_fedcba9876543210", account: "key_0123456789abcdef" }), undefined],
      ["owner:key_fedcba9876543210", "key_0123456789abcdef", undefined],
    ]);
  });
});

describe("a key's record", () => {
  const made = {
    id: "key_fedcba9876543210",
    start: "so_test_AbCd",
    plan: "free",
    name: "n",
    createdAt: "2026-01-01T00:00:00Z",
    scopes: ["orders:read"],
  };

  it("holds a revocation's time and reason together, as revoked() writes them: neither alone is a record", () => {
    const at = "2026-02-01T00:00:00Z";
    expect(ApiKeyRecord.safeParse(made).success).toBe(true);
    expect(ApiKeyRecord.safeParse(revoked(ApiKeyRecord.parse(made), "retired", at)).success).toBe(true);
    expect(ApiKeyRecord.safeParse({ ...made, revokedAt: at }).success).toBe(false);
    expect(ApiKeyRecord.safeParse({ ...made, revokedReason: "leaked" }).success).toBe(false);
  });

  it("keeps the first revocation's reason, but says leaked once a retired key is found leaked", () => {
    const retired = revoked(ApiKeyRecord.parse(made), "retired", "2026-02-01T00:00:00Z");
    expect(revoked(retired, "retired", "2026-03-01T00:00:00Z")).toEqual(retired);
    expect(revoked(retired, "leaked", "2026-03-01T00:00:00Z")).toEqual({ ...retired, revokedReason: "leaked" });
  });
});
