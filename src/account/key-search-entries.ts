/**
 * The operators' search of keys in KV (docs/operations.md#api-keys): `id:<keyId>` → the key's account (which never
 * changes), with a summary of the key as metadata; `plan:<account>` → the plan an account was moved to. Written by the
 * account alone, after its own changes, in their order; nothing decides from a summary or a plan entry.
 */
import { callDependency } from "../lib/call-dependency";
import type { AccountPlan } from "./account-keys";
import { accountOf, type ApiKeyRecord } from "./key-record";

export const idName = (keyId: string) => `id:${keyId}`;
export const planName = (account: string) => `plan:${account}`;

/** The summary on an `id:` entry: the key with its account's plan when it was written (a `plan:` entry is newer). */
export type KeySummary = Omit<ApiKeyRecord, "id">;

/** What the account holds now: keys (an id alone: gone), and its plan when that is owed. */
export interface SearchChange {
  keys: (ApiKeyRecord | string)[];
  plan?: AccountPlan;
}

/** The entries of a change: the plan first, so no key's summary is newer than the plan entry the search prefers. */
export async function writeSearchEntries(kv: KVNamespace, account: string, change: SearchChange): Promise<void> {
  if (change.plan) await callDependency("KV", () => kv.put(planName(account), JSON.stringify(change.plan)));
  for (const key of change.keys) {
    if (typeof key === "string") await callDependency("KV", () => kv.delete(idName(key)));
    else {
      const { id, ...summary } = key;
      await callDependency("KV", () => kv.put(idName(id), accountOf(key), { metadata: summary }));
    }
  }
}

/** What the account holds now: a key (undefined: gone) and its plan. */
interface Holds {
  key(keyId: string): ApiKeyRecord | undefined;
  plan(): AccountPlan | undefined;
}

/** Entries owed, each by the number of the change that last owed it: one owed again while written stays owed. */
interface Owed {
  change: number;
  keys: Record<string, number>;
  plan: number;
}

const OWED = "searchEntriesOwed";
const NONE: Owed = { change: 0, keys: {}, plan: 0 };

/**
 * The entries an account owes the search, in its own storage: owed in the same step as the change (so neither a failed
 * write nor a restart loses one), then written one write after another, each with what the account holds when it
 * runs, so a slow write never lands after a newer one.
 */
export class SearchEntries {
  #last: Promise<void> = Promise.resolve();
  readonly #kv: SyncKvStorage;
  readonly #write: (change: SearchChange) => Promise<void>;
  readonly #holds: Holds;

  constructor(kv: SyncKvStorage, write: (change: SearchChange) => Promise<void>, holds: Holds) {
    this.#kv = kv;
    this.#write = write;
    this.#holds = holds;
  }

  get owes(): boolean {
    const owed = this.#owed();
    return owed.plan > 0 || Object.keys(owed.keys).length > 0;
  }

  owe(change: { keyIds: readonly string[]; plan?: boolean }): void {
    const owed = this.#owed();
    const number = owed.change + 1;
    this.#kv.put(OWED, {
      change: number,
      keys: { ...owed.keys, ...Object.fromEntries(change.keyIds.map((id) => [id, number])) },
      plan: change.plan ? number : owed.plan,
    });
  }

  /** Writes what is owed once any write under way has ended; rejects, still owing it, when KV failed. */
  write(): Promise<void> {
    const written = this.#last.then(async () => {
      const owed = this.#owed();
      const ids = Object.keys(owed.keys);
      if (ids.length === 0 && owed.plan === 0) return;
      await this.#write({
        keys: ids.map((id) => this.#holds.key(id) ?? id),
        ...(owed.plan > 0 && { plan: this.#holds.plan() }),
      });
      const now = this.#owed();
      const keys = Object.fromEntries(Object.entries(now.keys).filter(([id, number]) => owed.keys[id] !== number));
      const left = { ...now, keys, plan: now.plan === owed.plan ? 0 : now.plan };
      if (Object.keys(keys).length === 0 && left.plan === 0) this.#kv.delete(OWED);
      else this.#kv.put(OWED, left);
    });
    this.#last = written.catch(() => {});
    return written;
  }

  #owed(): Owed {
    return this.#kv.get<Owed>(OWED) ?? NONE;
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
