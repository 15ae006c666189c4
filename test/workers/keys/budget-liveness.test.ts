import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { newApiKey, putApiKey } from "../../../src/keys/issue-key";
import { budgetPrefix } from "../../../src/keys/kv-layout";
import { budgetLiveness, keysChangedAtOf } from "../../../src/keys/live-budget";
import { TtlCache } from "../../../src/lib/ttl-cache";

/**
 * Whether a budget has a live key that reads orders (its webhooks are delivered only then), told from the budget's
 * own entries (docs/operations.md#api-keys): never by listing every key.
 */

/** The KV binding, naming the prefixes it lists. */
function listingKv() {
  const listed: string[] = [];
  const kv = new Proxy(env.API_KEYS, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        if (property === "list") listed.push((args[0] as KVNamespaceListOptions).prefix ?? "");
        return value.apply(target, args);
      };
    },
  });
  return { kv, listed };
}

describe("a budget's liveness", () => {
  it("tells a budget with no live key from the budget's own entries, never listing every key", async () => {
    const { key, record } = newApiKey("so_test_", { plan: "pro", name: "revoked" });
    await putApiKey(env.API_KEYS, key, { ...record, revokedAt: new Date().toISOString() });
    const { kv, listed } = listingKv();
    expect(await budgetLiveness(kv, record.id, new TtlCache(10), keysChangedAtOf(env.ACCOUNTS, record.id))).toBe(
      "dead",
    );
    expect(listed).toEqual([budgetPrefix(record.id)]);
  });

  it("counts a key live only while its id entry agrees: a budget entry that says live of a key revoked since does not keep the budget live", async () => {
    const { key, record } = newApiKey("so_test_", { plan: "pro", name: "revoked meanwhile" });
    await putApiKey(env.API_KEYS, key, { ...record, revokedAt: new Date().toISOString() });
    await env.API_KEYS.put(`${budgetPrefix(record.id)}${record.id}`, "", { metadata: {} });
    expect(
      await budgetLiveness(env.API_KEYS, record.id, new TtlCache(10), keysChangedAtOf(env.ACCOUNTS, record.id)),
    ).toBe("dead");
  });
});
