import { env } from "cloudflare:workers";
import { createExecutionContext, createScheduledController, waitOnExecutionContext } from "cloudflare:test";
import { beforeEach, describe, expect, it } from "vitest";
import worker from "../../../src/app/worker";
import { BUDGET_ENTRIES_MARK, backfillBudgetEntries } from "../../../src/keys/budget-entries-backfill";
import { newApiKey, putApiKey } from "../../../src/keys/issue-key";
import { budgetPrefix } from "../../../src/keys/kv-layout";
import { budgetLiveness, keysChangedAtOf } from "../../../src/keys/live-budget";
import { TtlCache } from "../../../src/lib/ttl-cache";

/**
 * Keys stored before budgets were listed (docs/operations.md#api-keys): the
 * cron gives each its budget entry, a bounded page a run, so that a budget
 * with no live key is then told from its own entries without listing every
 * key on each of its lanes' runs.
 */

/** Writes a key as the layout before budget entries did: its record and its id entry only. */
const legacyWriter = {
  put: async (name: string, value: string, options?: unknown) =>
    void (name.startsWith("budget:") || (await env.API_KEYS.put(name, value, options as KVNamespacePutOptions))),
};

/** The KV binding, counting its calls and naming the prefixes it lists. */
function countingKv() {
  const listed: string[] = [];
  let calls = 0;
  const kv = new Proxy(env.API_KEYS, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (typeof value !== "function") return value;
      return (...args: unknown[]) => {
        calls += 1;
        if (property === "list") listed.push((args[0] as KVNamespaceListOptions).prefix ?? "");
        return value.apply(target, args);
      };
    },
  });
  return { kv, listed, calls: () => calls, reset: () => ((calls = 0), listed.splice(0)) };
}

const runCron = async () => {
  const ctx = createExecutionContext();
  worker.scheduled(createScheduledController({ scheduledTime: Date.now(), cron: "* * * * *" }), env, ctx);
  await waitOnExecutionContext(ctx);
};

beforeEach(() => env.API_KEYS.delete(BUDGET_ENTRIES_MARK));

describe("the budget entries' backfill", () => {
  it("gives every key stored before budgets were listed its entry, a bounded page a run, and leaves a newer revocation alone", async () => {
    const legacy = Array.from({ length: 12 }, (_, i) => newApiKey("so_test_", { plan: "pro", name: `legacy ${i}` }));
    for (const { key, record } of legacy) await putApiKey(legacyWriter, key, record);
    const revoked = newApiKey("so_test_", { plan: "pro", name: "legacy, revoked" });
    await putApiKey(legacyWriter, revoked.key, { ...revoked.record, revokedAt: "2026-01-02T00:00:00.000Z" });
    // A revocation in flight: its budget entry written (first, as every revocation writes it), its id entry not yet.
    const revoking = newApiKey("so_test_", { plan: "pro", name: "being revoked" });
    await putApiKey(legacyWriter, revoking.key, revoking.record);
    await env.API_KEYS.put(`${budgetPrefix(revoking.record.id)}${revoking.record.id}`, "", {
      metadata: { revokedAt: "2026-03-04T00:00:00.000Z" },
    });

    const counting = countingKv();
    const runs: string[] = [];
    for (let run = 0; run < 20 && runs.at(-1) !== "done"; run++) {
      counting.reset();
      runs.push(await backfillBudgetEntries(counting.kv, 5));
      // The mark read, one list, one bulk read, at most a write per key of the page, the mark written.
      expect(counting.calls()).toBeLessThanOrEqual(1 + 1 + 1 + 5 + 1);
    }
    // 14 keys and the default key of the tests' setup: three pages of five, and done.
    expect(runs).toEqual(["more", "more", "done"]);

    for (const { record } of legacy) {
      expect(await env.API_KEYS.getWithMetadata(`${budgetPrefix(record.id)}${record.id}`)).toMatchObject({
        value: "",
        metadata: {},
      });
    }
    expect(
      (await env.API_KEYS.getWithMetadata(`${budgetPrefix(revoked.record.id)}${revoked.record.id}`)).metadata,
    ).toEqual({ revokedAt: "2026-01-02T00:00:00.000Z" });
    expect(
      (await env.API_KEYS.getWithMetadata(`${budgetPrefix(revoking.record.id)}${revoking.record.id}`)).metadata,
    ).toEqual({ revokedAt: "2026-03-04T00:00:00.000Z" });
    // Done is done: a later run reads the mark alone.
    counting.reset();
    expect(await backfillBudgetEntries(counting.kv, 5)).toBe("done");
    expect(counting.calls()).toBe(1);
  });

  it("is run by the minute's cron until done", async () => {
    const { key, record } = newApiKey("so_test_", { plan: "pro", name: "legacy" });
    await putApiKey(legacyWriter, key, record);
    await runCron();
    expect(await env.API_KEYS.get(BUDGET_ENTRIES_MARK, "json")).toEqual({ done: true });
    expect(await env.API_KEYS.get(`${budgetPrefix(record.id)}${record.id}`)).toBe("");
  });

  it("once done, tells a budget with no live key from the budget's own entries, never listing every key", async () => {
    const { key, record } = newApiKey("so_test_", { plan: "pro", name: "revoked" });
    await putApiKey(env.API_KEYS, key, { ...record, revokedAt: new Date().toISOString() });
    const before = countingKv();
    expect(
      await budgetLiveness(before.kv, record.id, new TtlCache(10), keysChangedAtOf(env.RATE_LIMITER, record.id)),
    ).toBe("dead");
    // Before the backfill is done, a key stored before budgets were listed could be anywhere among the id entries.
    expect(before.listed).toEqual([budgetPrefix(record.id), "id:"]);

    await backfillBudgetEntries(env.API_KEYS);
    const after = countingKv();
    expect(
      await budgetLiveness(after.kv, record.id, new TtlCache(10), keysChangedAtOf(env.RATE_LIMITER, record.id)),
    ).toBe("dead");
    expect(after.listed).toEqual([budgetPrefix(record.id)]);
  });

  it("counts a key live only while its id entry agrees: an entry written from an id entry read just before a revocation does not keep the budget live", async () => {
    const { key, record } = newApiKey("so_test_", { plan: "pro", name: "revoked meanwhile" });
    await putApiKey(env.API_KEYS, key, { ...record, revokedAt: new Date().toISOString() });
    await env.API_KEYS.put(`${budgetPrefix(record.id)}${record.id}`, "", { metadata: {} });
    await backfillBudgetEntries(env.API_KEYS);
    expect(
      await budgetLiveness(env.API_KEYS, record.id, new TtlCache(10), keysChangedAtOf(env.RATE_LIMITER, record.id)),
    ).toBe("dead");
  });
});
