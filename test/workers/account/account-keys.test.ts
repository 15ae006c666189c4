import { env } from "cloudflare:workers";
import { runDurableObjectAlarm, runInDurableObject } from "cloudflare:test";
import { describe, expect, it } from "vitest";
import type { Account } from "../../../src/account/account";
import { AccountKeys, MAX_ACCOUNT_KEYS } from "../../../src/account/account-keys";
import type { ApiKeyRecord } from "../../../src/account/key-record";
import { generateKeyId } from "../../../src/keys/issue-key";
import { idName, planName, writeSearchEntries } from "../../../src/account/key-search-entries";
import { api, errorBodyOf } from "../../support/request";
import { storeTestKey } from "../../support/test-keys";

/**
 * An account's keys (src/account/account-keys.ts): a row each, of a measured size, and at most MAX_ACCOUNT_KEYS of
 * them, the longest-stopped going first; an account of live keys only refuses the next rotation.
 */
const ALL = ["orders:read", "orders:write", "webhooks:manage", "keys:manage"] as const;

/** A key of `account` as a rotation leaves one, live or stopped `stoppedAgoMs` ago. */
const keyOf = (account: string, stoppedAgoMs?: number): ApiKeyRecord => ({
  id: generateKeyId(),
  start: "so_test_AbCd",
  plan: "pro",
  name: "a rotation of the key made on 2026-12-06 by the integration's deploy job",
  createdAt: new Date().toISOString(),
  scopes: [...ALL],
  budget: account,
  ...(stoppedAgoMs === undefined
    ? { expiresAt: new Date(Date.now() + 86_400_000).toISOString() }
    : { expiresAt: new Date(Date.now() - stoppedAgoMs).toISOString(), rotatedTo: generateKeyId() }),
});

/** Keys straight into the account's table: a thousand search entries would only slow the test. */
const fill = (stub: DurableObjectStub<Account>, keys: ApiKeyRecord[]) =>
  runInDurableObject(stub, (_, state) => {
    const table = new AccountKeys(state.storage.sql);
    for (const key of keys) table.add(key);
  });

describe("an account's keys", () => {
  it(`are at most ${MAX_ACCOUNT_KEYS.toLocaleString("en")}, under 500 bytes each as stored`, async () => {
    await runInDurableObject(env.ACCOUNTS.getByName("account-of-many-keys"), (_, state) => {
      const keys = new AccountKeys(state.storage.sql);
      const before = state.storage.sql.databaseSize;
      for (let i = 0; i < MAX_ACCOUNT_KEYS; i++) keys.add(keyOf("account-of-many-keys"));
      const perKey = (state.storage.sql.databaseSize - before) / MAX_ACCOUNT_KEYS;
      expect(perKey).toBeLessThan(500);
      // 1,000 keys: under 500 KB of the object's 10 GB.
      expect(keys.all()).toHaveLength(MAX_ACCOUNT_KEYS);
    });
  });

  it("make room for a rotation by letting the key stopped longest ago go", async () => {
    const owner = await storeTestKey({ scopes: [...ALL] });
    const account = env.ACCOUNTS.getByName(owner.record.id);
    const oldest = { ...keyOf(owner.record.id, 30 * 86_400_000), name: "stopped longest ago" };
    await fill(account, [oldest, ...Array.from({ length: MAX_ACCOUNT_KEYS - 2 }, () => keyOf(owner.record.id, 1_000))]);
    await writeSearchEntries(env.API_KEYS, owner.record.id, { keys: [oldest] });
    const rotated = await api(`/v2/keys/${owner.record.id}/rotate`, {
      key: owner.key,
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ graceSeconds: 60 }),
    });
    expect(rotated.status).toBe(201);
    expect(await account.key(oldest.id)).toBeNull();
    // Gone from the operators' search too.
    expect(await env.API_KEYS.get(idName(oldest.id))).toBeNull();
    const page = await account.keys("", MAX_ACCOUNT_KEYS + 1);
    expect(page.keys).toHaveLength(MAX_ACCOUNT_KEYS);
  });

  it("refuse a rotation with 409 too_many_keys when every key the account holds is live", async () => {
    const owner = await storeTestKey({ scopes: [...ALL] });
    await fill(
      env.ACCOUNTS.getByName(owner.record.id),
      Array.from({ length: MAX_ACCOUNT_KEYS - 1 }, () => keyOf(owner.record.id)),
    );
    const refused = await api(`/v2/keys/${owner.record.id}/rotate`, {
      key: owner.key,
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({}),
    });
    expect(await errorBodyOf(refused)).toMatchObject({ code: "too_many_keys", status: 409 });
    // Nothing changed: the key still works, and no audit row stays for the refused rotation.
    expect((await api("/v1/store/orders", { key: owner.key })).status).toBe(200);
    const { results } = await env.DB.prepare("SELECT operation FROM key_events WHERE key_id = ?1")
      .bind(owner.record.id)
      .all();
    expect(results).toEqual([]);
  });

  it("answer a change whose search entry KV refused, owe the entry, keep the alarm by its retry, and write it then", async () => {
    const key = keyOf("account-whose-kv-fails");
    const account = env.ACCOUNTS.getByName("account-whose-kv-fails");
    await account.addKey(key);
    await runInDurableObject(account, async (instance, state) => {
      const bindings = (instance as unknown as { env: Env }).env;
      const real = bindings.API_KEYS;
      bindings.API_KEYS = new Proxy(real, {
        get: (target, property) =>
          property === "put" ? () => Promise.reject(new Error("KV PUT failed: 500")) : Reflect.get(target, property),
      });
      const before = Date.now();
      await expect(
        instance.setPlan({ plan: "enterprise", limits: { perMinute: 7, perDay: 70 } }),
      ).resolves.toBeTruthy();
      const retryAt = (await state.storage.getAlarm())!;
      expect(retryAt).toBeGreaterThanOrEqual(before + 30_000);
      expect(retryAt).toBeLessThanOrEqual(Date.now() + 30_000);
      // A window opened now ends with the day: the alarm stays by the retry (the alarm sets the next itself).
      instance.forgive();
      expect(await state.storage.getAlarm()).toBeLessThanOrEqual(Date.now() + 30_000);
      bindings.API_KEYS = real;
    });
    expect(await env.API_KEYS.get(planName("account-whose-kv-fails"))).toBeNull();
    expect(await runDurableObjectAlarm(account)).toBe(true);
    expect(await env.API_KEYS.get(planName("account-whose-kv-fails"), "json")).toEqual({
      plan: "enterprise",
      limits: { perMinute: 7, perDay: 70 },
    });
  });

  it("owe the search what a failed write left, and write it at the alarm", async () => {
    const key = keyOf("account-owing-its-search");
    const account = env.ACCOUNTS.getByName("account-owing-its-search");
    await account.addKey(key);
    await env.API_KEYS.delete(idName(key.id));
    // As a write that failed leaves it: owed in the object's storage, the alarm set.
    await runInDurableObject(account, async (_, state) => {
      state.storage.kv.put("searchEntriesOwed", { change: 7, keys: { [key.id]: 7 }, plan: 7 });
      await state.storage.setAlarm(Date.now() + 30_000);
    });
    expect(await runDurableObjectAlarm(account)).toBe(true);
    expect(await env.API_KEYS.getWithMetadata(idName(key.id))).toMatchObject({
      value: "account-owing-its-search",
      metadata: { name: key.name },
    });
    expect(await env.API_KEYS.get(planName("account-owing-its-search"), "json")).toEqual({ plan: "pro" });
    expect(await runInDurableObject(account, (_, state) => state.storage.kv.get("searchEntriesOwed"))).toBeUndefined();
  });

  it("write a key's search entry once as it is revoked: not again as a retired key is found leaked, nor as the leak ends", async () => {
    const key = keyOf("account-of-a-leak");
    const account = env.ACCOUNTS.getByName("account-of-a-leak");
    await account.addKey(key);
    await runInDurableObject(account, async (instance) => {
      const bindings = (instance as unknown as { env: Env }).env;
      const real = bindings.API_KEYS;
      const puts: string[] = [];
      bindings.API_KEYS = new Proxy(real, {
        get: (target, property) =>
          property === "put"
            ? (name: string, ...rest: [string]) => {
                puts.push(name);
                return real.put(name, ...rest);
              }
            : Reflect.get(target, property),
      });
      const at = new Date().toISOString();
      await instance.revokeKey(key.id, "retired", at);
      await instance.revokeKey(key.id, "leaked", at);
      instance.endLeak(key.id, at);
      bindings.API_KEYS = real;
      // KV takes one write a second per name: a leak's revocation and ending come within one.
      expect(puts).toEqual([idName(key.id)]);
    });
  });
});
