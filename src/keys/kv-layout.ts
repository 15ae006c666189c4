/**
 * Where a key lives in KV (docs/operations.md#api-keys): its record under the SHA-256
 * of the key, an entry that leads from its id back to that hash, for
 * revoking by id, and one under its budget, so the keys of a budget are one
 * list call. The key itself is never stored.
 */
import { budgetOf, type ApiKeyRecord } from "../account/key-record";
import { callDependency } from "../lib/call-dependency";

export const recordName = (hash: string) => `key:${hash}`;
export const idName = (keyId: string) => `id:${keyId}`;
/** Every key of a budget lists under `budgetPrefix(budget)`. */
export const budgetPrefix = (budget: string) => `budget:${budget}:`;

/** Summary kept as metadata on `id:` entries so listing keys is one KV list call. */
export type KeySummary = Omit<ApiKeyRecord, "id">;

/**
 * What a budget's entry of a key says: enough to tell whether the key is live (webhooks are delivered only for a budget
 * that has one).
 */
export type BudgetMember = Pick<ApiKeyRecord, "revokedAt" | "expiresAt">;

interface KvEntry {
  key: string;
  value: string;
  metadata?: KeySummary | BudgetMember;
}

/** A key's entry under its budget: its name, and what it says. */
export function budgetEntry(record: ApiKeyRecord): { key: string; metadata: BudgetMember } {
  const metadata: BudgetMember = {
    ...(record.revokedAt && { revokedAt: record.revokedAt }),
    ...(record.expiresAt && { expiresAt: record.expiresAt }),
  };
  return { key: `${budgetPrefix(budgetOf(record))}${record.id}`, metadata };
}

/** The KV entries that make up one stored key: written alike by `npm run keys` and by the operator API's revoke. */
export function keyEntries(hash: string, record: ApiKeyRecord): KvEntry[] {
  const { id, ...summary } = record;
  // The budget's entry first: a revocation whose later writes fail has still stopped the budget's webhooks.
  return [
    { ...budgetEntry(record), value: "" },
    { key: recordName(hash), value: JSON.stringify(record) },
    { key: idName(id), value: hash, metadata: summary },
  ];
}

/** The part of a KV binding that stores entries. */
export interface KvWriter {
  put(key: string, value: string, options?: { metadata?: unknown }): Promise<unknown>;
}

/**
 * Stores a key's entries through a KV binding (the worker, the tests, the bench), as `npm run keys` writes them through
 * wrangler.
 */
export async function storeKeyRecord(kv: KvWriter, hash: string, record: ApiKeyRecord): Promise<void> {
  for (const entry of keyEntries(hash, record)) {
    await callDependency("KV", () => kv.put(entry.key, entry.value, entry.metadata && { metadata: entry.metadata }));
  }
}
