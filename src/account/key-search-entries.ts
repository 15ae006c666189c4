/**
 * The operators' search of keys in KV (docs/operations.md#api-keys): `id:<keyId>` → the key's account, with a summary
 * of the key as metadata; `plan:<account>` → the plan an account was moved to. Written by the account alone, after its
 * own changes, in their order; nothing decides from them.
 */
import { callDependency } from "../lib/call-dependency";
import type { AccountPlan } from "./account-keys";
import { accountOf, type ApiKeyRecord } from "./key-record";

export const idName = (keyId: string) => `id:${keyId}`;
export const planName = (account: string) => `plan:${account}`;

/** The summary on an `id:` entry: the key with its account's plan when it was written (a `plan:` entry is newer). */
export type KeySummary = Omit<ApiKeyRecord, "id">;

/** What the account changed: keys as they are now (an id alone: gone), and its plan when that changed. */
export interface SearchChange {
  keys: (ApiKeyRecord | string)[];
  plan?: AccountPlan;
}

/** One change's entries, key by key; the account's plan last, so a search never reads a plan older than a key's. */
export async function writeSearchEntries(kv: KVNamespace, account: string, change: SearchChange): Promise<void> {
  for (const key of change.keys) {
    if (typeof key === "string") await callDependency("KV", () => kv.delete(idName(key)));
    else {
      const { id, ...summary } = key;
      await callDependency("KV", () => kv.put(idName(id), accountOf(key), { metadata: summary }));
    }
  }
  if (change.plan) await callDependency("KV", () => kv.put(planName(account), JSON.stringify(change.plan)));
}

/**
 * Entries written one change after another, each with what the account holds when it is written: a slow write never
 * lands after a later change's. A failed write fails its own change's call, and the next change writes on.
 */
/** What the account holds now: a key (undefined: gone) and its plan. */
interface Holds {
  key(keyId: string): ApiKeyRecord | undefined;
  plan(): AccountPlan | undefined;
}

export class SearchEntryWriter {
  #last: Promise<void> = Promise.resolve();
  readonly #write: (change: SearchChange) => Promise<void>;
  readonly #holds: Holds;

  constructor(write: (change: SearchChange) => Promise<void>, holds: Holds) {
    this.#write = write;
    this.#holds = holds;
  }

  /** Writes the entries of the keys named (and of the plan) once every earlier change's are written. */
  after(change: { keyIds: readonly string[]; plan?: boolean }): Promise<void> {
    const written = this.#last.then(() =>
      this.#write({
        keys: change.keyIds.map((id) => this.#holds.key(id) ?? id),
        ...(change.plan && { plan: this.#holds.plan() }),
      }),
    );
    this.#last = written.catch(() => {});
    return written;
  }
}

/** KV's bulk read takes at most 100 names. */
const BULK_READ = 100;

/** Listed `id:` entries as keys, each with its account's newest plan (its `plan:` entry, else the summary's). */
export async function keysOfEntries(
  kv: KVNamespace,
  entries: readonly { name: string; metadata?: KeySummary | null }[],
): Promise<ApiKeyRecord[]> {
  const keys = entries.flatMap(({ name, metadata }) =>
    metadata ? [{ id: name.slice(idName("").length), ...metadata }] : [],
  );
  const accounts = [...new Set(keys.map(accountOf))];
  const plans = new Map<string, AccountPlan | null>();
  for (let start = 0; start < accounts.length; start += BULK_READ) {
    const chunk = accounts.slice(start, start + BULK_READ);
    const read = await callDependency("KV", () => kv.get<AccountPlan>(chunk.map(planName), "json"));
    for (const account of chunk) plans.set(account, read.get(planName(account)) ?? null);
  }
  return keys.map((key) => {
    const moved = plans.get(accountOf(key));
    if (!moved) return key;
    const { limits: _, ...own } = key;
    return { ...own, plan: moved.plan, ...(moved.limits && { limits: moved.limits }) };
  });
}
