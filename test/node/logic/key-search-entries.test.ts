import { describe, expect, it } from "vitest";
import type { ApiKeyRecord } from "../../../src/account/key-record";
import { keysOfEntries, SearchEntryWriter, writeSearchEntries } from "../../../src/account/key-search-entries";

/** The operators' search entries (src/account/key-search-entries.ts), written by the account in its changes' order. */
const record: ApiKeyRecord = {
  id: "key_fedcba9876543210",
  plan: "free",
  name: "n",
  createdAt: "2026-01-01T00:00:00Z",
  scopes: [],
  budget: "key_0123456789abcdef",
};

/** A KV of a Map: what it holds, and each write as it came. */
function memoryKv() {
  const held = new Map<string, { value: string; metadata?: unknown }>();
  const writes: string[] = [];
  const kv = {
    put: async (name: string, value: string, options?: { metadata?: unknown }) => {
      writes.push(`put ${name}`);
      held.set(name, { value, metadata: options?.metadata });
    },
    delete: async (name: string) => {
      writes.push(`delete ${name}`);
      held.delete(name);
    },
    get: async (names: string[]) =>
      new Map(names.map((name) => [name, held.has(name) ? JSON.parse(held.get(name)!.value) : null])),
  };
  return { kv: kv as unknown as KVNamespace, held, writes };
}

describe("an account's search entries", () => {
  it("are each key's account with its summary under its id, a gone key's deleted, and a moved plan last", async () => {
    const { kv, held, writes } = memoryKv();
    await writeSearchEntries(kv, "key_0123456789abcdef", {
      keys: [record, "key_0000000000000000"],
      plan: { plan: "pro" },
    });
    expect(writes).toEqual([
      "put id:key_fedcba9876543210",
      "delete id:key_0000000000000000",
      "put plan:key_0123456789abcdef",
    ]);
    const { id: _, ...summary } = record;
    expect(held.get("id:key_fedcba9876543210")).toEqual({ value: "key_0123456789abcdef", metadata: summary });
  });

  it("are read with the plan the account was moved to, its own limits dropped with the plan they were of", async () => {
    const { kv } = memoryKv();
    const { id: _, ...summary } = { ...record, plan: "enterprise" as const, limits: { perMinute: 9, perDay: 99 } };
    await writeSearchEntries(kv, "key_0123456789abcdef", { keys: [], plan: { plan: "pro" } });
    const entries = [
      { name: "id:key_fedcba9876543210", metadata: summary },
      { name: "id:key_aaaaaaaaaaaaaaaa", metadata: { ...summary, budget: "key_bbbbbbbbbbbbbbbb" } },
    ];
    const [moved, unmoved] = await keysOfEntries(kv, entries);
    expect(moved).toEqual({ ...record, plan: "pro" });
    expect(unmoved).toMatchObject({ id: "key_aaaaaaaaaaaaaaaa", plan: "enterprise", limits: { perMinute: 9 } });
  });

  it("land in the order of the changes, each as the account holds the key then, though an earlier write is slow", async () => {
    let name = "first";
    const landed: string[] = [];
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const writer = new SearchEntryWriter(
      async ({ keys }) => {
        const written = (keys[0] as ApiKeyRecord).name;
        if (written === "first") await slow;
        landed.push(written);
      },
      { key: () => ({ ...record, name }), plan: () => undefined },
    );
    const first = writer.after({ keyIds: [record.id] });
    await Promise.resolve();
    name = "second";
    const second = writer.after({ keyIds: [record.id] });
    release();
    await Promise.all([first, second]);
    expect(landed).toEqual(["first", "second"]);
  });

  it("fail only their own change's call: the next change writes on", async () => {
    let calls = 0;
    const writer = new SearchEntryWriter(
      async () => {
        if (calls++ === 0) throw new Error("KV put failed: 500");
      },
      { key: () => record, plan: () => undefined },
    );
    await expect(writer.after({ keyIds: [record.id] })).rejects.toThrow("KV put failed");
    await expect(writer.after({ keyIds: [record.id] })).resolves.toBeUndefined();
    expect(calls).toBe(2);
  });
});
