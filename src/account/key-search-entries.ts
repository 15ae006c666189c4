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

/** The summary on an `id:` entry: what the search shows of a key, with its account's plan when it was written. */
export type KeySummary = Omit<ApiKeyRecord, "id" | "revokedReason" | "leakEndedAt">;

/** What the account holds now: keys (an id alone: gone), and its plan when that is owed. */
export interface SearchChange {
  keys: (ApiKeyRecord | string)[];
  plan?: AccountPlan;
}

/** KV's most metadata a name carries: a summary past it would be refused every time, so its key's name is cut. */
const MAX_METADATA_BYTES = 1_024;
const bytes = (value: unknown) => new TextEncoder().encode(JSON.stringify(value)).byteLength;

/** A key's summary within MAX_METADATA_BYTES, its name cut by as little as that takes. */
export function summaryOf({ id: _, revokedReason: __, leakEndedAt: ___, ...summary }: ApiKeyRecord): KeySummary {
  let name = [...summary.name];
  while (bytes({ ...summary, name: name.join("") }) > MAX_METADATA_BYTES && name.length > 0) name = name.slice(0, -1);
  return { ...summary, name: name.join("") };
}

/** Entries of what the account holds now: the plan first, as the search prefers it to a key's summary. */
export async function writeSearchEntries(kv: KVNamespace, account: string, change: SearchChange): Promise<void> {
  if (change.plan) await callDependency("KV", () => kv.put(planName(account), JSON.stringify(change.plan)));
  for (const key of change.keys) {
    if (typeof key === "string") await callDependency("KV", () => kv.delete(idName(key)));
    else await callDependency("KV", () => kv.put(idName(key.id), accountOf(key), { metadata: summaryOf(key) }));
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
const owesAny = (owed: Owed) => owed.plan > 0 || Object.keys(owed.keys).length > 0;

/**
 * The entries an account owes the search, owed in its storage with the change (no failed write nor restart loses one),
 * written one write after another with what the account holds then, so a slow write never lands after a newer one.
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
    return owesAny(this.#owed());
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

  /** Writes what is owed after any write under way, entry by entry; rejects when KV failed (that stays owed). */
  write(): Promise<void> {
    const written = this.#last.then(async () => {
      const owed = this.#owed();
      if (!owesAny(owed)) return;
      const failures: unknown[] = [];
      const landed = { plan: false, keys: new Set<string>() };
      const land = async (change: SearchChange, done: () => void) => {
        try {
          await this.#write(change);
          done();
        } catch (error) {
          failures.push(error);
        }
      };
      if (owed.plan > 0) {
        const plan = this.#holds.plan();
        if (plan) await land({ keys: [], plan }, () => (landed.plan = true));
        else landed.plan = true;
      }
      for (const id of Object.keys(owed.keys))
        await land({ keys: [this.#holds.key(id) ?? id] }, () => landed.keys.add(id));
      const now = this.#owed();
      const keys = Object.fromEntries(
        Object.entries(now.keys).filter(([id, number]) => !(landed.keys.has(id) && owed.keys[id] === number)),
      );
      const left = { ...now, keys, plan: landed.plan && now.plan === owed.plan ? 0 : now.plan };
      if (!owesAny(left)) this.#kv.delete(OWED);
      else this.#kv.put(OWED, left);
      if (failures.length > 0) throw new AggregateError(failures, `${failures.length} search entries were not written`);
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
