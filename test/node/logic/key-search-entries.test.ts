import { describe, expect, it } from "vitest";
import type { ApiKeyRecord } from "../../../src/account/key-record";
import type { AccountPlan } from "../../../src/account/account-keys";
import { seededRandom } from "../../support/lease-simulation";
import {
  keysOfEntries,
  SearchEntries,
  summaryOf,
  writeSearchEntries,
  type SearchChange,
} from "../../../src/account/key-search-entries";

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

/** An object's key-value storage, in a Map. */
function memoryStorage(): SyncKvStorage {
  const held = new Map<string, unknown>();
  return {
    get: (name: string) => structuredClone(held.get(name)),
    put: (name: string, value: unknown) => void held.set(name, structuredClone(value)),
    delete: (name: string) => held.delete(name),
  } as unknown as SyncKvStorage;
}

describe("an account's search entries", () => {
  it("are a moved plan first, then each key's account with its summary under its id, a gone key's deleted", async () => {
    const { kv, held, writes } = memoryKv();
    await writeSearchEntries(kv, "key_0123456789abcdef", {
      keys: [record, "key_0000000000000000"],
      plan: { plan: "pro" },
    });
    expect(writes).toEqual([
      "put plan:key_0123456789abcdef",
      "put id:key_fedcba9876543210",
      "delete id:key_0000000000000000",
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

  it("land in the order of the changes, each key as the account holds it when written, though a write is slow", async () => {
    let name = "first";
    const landed: string[] = [];
    let release!: () => void;
    const slow = new Promise<void>((resolve) => (release = resolve));
    const entries = new SearchEntries(
      memoryStorage(),
      async ({ keys }) => {
        const written = (keys[0] as ApiKeyRecord).name;
        if (written === "first") await slow;
        landed.push(written);
      },
      { key: () => ({ ...record, name }), plan: () => undefined },
    );
    entries.owe({ keyIds: [record.id] });
    const first = entries.write();
    await Promise.resolve();
    // Changed again while the first write is under way: owed again, and written after it.
    name = "second";
    entries.owe({ keyIds: [record.id] });
    const second = entries.write();
    release();
    await Promise.all([first, second]);
    expect(landed).toEqual(["first", "second"]);
    expect(entries.owes).toBe(false);
  });

  it("stay owed, in the account's storage, when a write fails or a change comes while it runs", async () => {
    const kept = memoryStorage();
    let failing = true;
    const written: string[][] = [];
    const holds = { key: (id: string) => ({ ...record, id }), plan: () => ({ plan: "pro" as const }) };
    const write = async ({ keys, plan }: SearchChange) => {
      if (failing) throw new Error("KV put failed: 429 Too Many Requests");
      written.push([...keys.map((key) => (key as ApiKeyRecord).id), ...(plan ? ["plan"] : [])]);
    };
    const entries = new SearchEntries(kept, write, holds);
    entries.owe({ keyIds: ["key_a"], plan: true });
    await expect(entries.write()).rejects.toThrow("2 search entries were not written");
    // A restart: a new writer over the same storage still owes them.
    const restarted = new SearchEntries(kept, write, holds);
    expect(restarted.owes).toBe(true);
    failing = false;
    let owedAgain = false;
    const racing: SearchEntries = new SearchEntries(
      kept,
      async (change) => {
        await write(change);
        if (owedAgain) return;
        owedAgain = true;
        racing.owe({ keyIds: ["key_a"] });
      },
      holds,
    );
    await racing.write();
    expect(written).toEqual([["plan"], ["key_a"]]);
    // key_a was owed again while it was written: still owed; the plan is not.
    expect(racing.owes).toBe(true);
    await racing.write();
    expect(written).toEqual([["plan"], ["key_a"], ["key_a"]]);
    expect(racing.owes).toBe(false);
  });

  it("land each on its own: one KV refuses holds up no other, and stays owed alone", async () => {
    const written: string[] = [];
    const entries = new SearchEntries(
      memoryStorage(),
      async ({ keys }) => {
        const id = (keys[0] as ApiKeyRecord).id;
        if (id === "key_b") throw new Error("KV PUT failed: 500");
        written.push(id);
      },
      { key: (id) => ({ ...record, id }), plan: () => undefined },
    );
    entries.owe({ keyIds: ["key_a", "key_b", "key_c"] });
    await expect(entries.write()).rejects.toThrow("1 search entries were not written");
    expect(written).toEqual(["key_a", "key_c"]);
    written.length = 0;
    await expect(entries.write()).rejects.toThrow();
    expect(written).toEqual([]);
  });

  it("carry a name cut to fit KV's 1,024 bytes of metadata, by whole characters, and no more than that takes", () => {
    const fits = summaryOf({ ...record, name: "Acme storefront" });
    expect(fits.name).toBe("Acme storefront");
    const scopes = ["orders:read", "orders:write", "webhooks:manage"] as const;
    const size = (name: string) =>
      new TextEncoder().encode(JSON.stringify(summaryOf({ ...record, name, scopes: [...scopes] }))).byteLength;
    // 200 CJK characters or 100 emoji fit; escaped control characters (6 bytes each in JSON) do not.
    for (const name of ["店".repeat(200), "🛒".repeat(100)]) expect(summaryOf({ ...record, name }).name).toBe(name);
    for (const name of ["\u0001".repeat(200), `${"\u0001".repeat(190)}${"🛒".repeat(5)}`]) {
      const cut = summaryOf({ ...record, name, scopes: [...scopes] }).name;
      expect(name.startsWith(cut) && cut.length < name.length).toBe(true);
      expect(size(name)).toBeLessThanOrEqual(1_024);
      // One character more would not fit.
      expect(
        new TextEncoder().encode(
          JSON.stringify({
            ...summaryOf({ ...record, scopes: [...scopes], name }),
            name: [...name].slice(0, [...cut].length + 1).join(""),
          }),
        ).byteLength,
      ).toBeGreaterThan(1_024);
    }
  });

  // Many changes at once, writes that take their time, KV down for stretches, restarts between calls.
  it("end, over 2,000 seeded runs, with KV holding what the account holds and nothing owed", async () => {
    for (let seed = 1; seed <= 2_000; seed++) {
      const random = seededRandom(seed);
      const held = new Map<string, ApiKeyRecord>();
      let plan: AccountPlan = { plan: "free" };
      const kv = new Map<string, unknown>();
      let down = false;
      const write = async ({ keys, plan: moved }: SearchChange) => {
        for (let tick = Math.floor(random() * 4); tick > 0; tick--) await Promise.resolve();
        if (down && random() < 0.7) throw new Error("KV PUT failed: 503");
        if (moved) kv.set("plan", moved.plan);
        for (const key of keys)
          if (typeof key === "string") kv.delete(key);
          else kv.set(key.id, key.name);
      };
      const holds = { key: (id: string) => held.get(id), plan: () => plan };
      const storage = memoryStorage();
      let entries = new SearchEntries(storage, write, holds);
      const calls: Promise<void>[] = [];
      for (let step = 0; step < 30; step++) {
        const roll = random();
        const id = `key_${Math.floor(random() * 4)}`;
        if (roll < 0.45) {
          held.set(id, { ...record, id, name: `${seed}.${step}` });
          entries.owe({ keyIds: [id] });
        } else if (roll < 0.55) {
          held.delete(id);
          entries.owe({ keyIds: [id] });
        } else if (roll < 0.7) {
          plan = { plan: random() < 0.5 ? "pro" : "free" };
          entries.owe({ keyIds: [], plan: true });
        } else if (roll < 0.8) down = !down;
        else if (roll < 0.85) {
          await Promise.allSettled(calls);
          entries = new SearchEntries(storage, write, holds);
        } else await Promise.allSettled(calls.splice(0, 2));
        if (roll < 0.7) calls.push(entries.write().catch(() => {}));
      }
      down = false;
      await Promise.allSettled(calls);
      await entries.write();
      expect(entries.owes, `seed ${seed}`).toBe(false);
      for (const id of ["key_0", "key_1", "key_2", "key_3"])
        expect(kv.get(id), `seed ${seed}, ${id}`).toBe(held.get(id)?.name);
      if (kv.has("plan")) expect(kv.get("plan"), `seed ${seed}`).toBe(plan.plan);
    }
  });
});
