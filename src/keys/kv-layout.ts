/**
 * Where a key is found in KV (docs/operations.md#api-keys): under its SHA-256 a pointer to its id and account, written
 * once and never stale; under its id, its account and a summary for the search, a projection nothing decides from. The
 * key itself is never stored.
 */
import { z } from "zod";
import { accountOf, KeyId, type ApiKeyRecord } from "../account/key-record";
import { callDependency } from "../lib/call-dependency";

export const pointerName = (hash: string) => `key:${hash}`;
export const idName = (keyId: string) => `id:${keyId}`;

/** What KV holds under `key:<sha256 hex>`: the key's id and its account. */
export const KeyPointer = z.strictObject({ keyId: KeyId, account: z.string().min(1) });
export type KeyPointer = z.infer<typeof KeyPointer>;

/** The summary on an `id:` entry, for the operators' key search (one KV list call per 1,000 keys). */
export type KeySummary = Omit<ApiKeyRecord, "id">;

/** The part of a KV binding that stores entries. */
export interface KvWriter {
  put(key: string, value: string, options?: { metadata?: unknown }): Promise<unknown>;
}

/** A key its account let go: its entry leaves the search (its pointer stays, and finds it unknown). */
export async function dropKeyEntry(kv: { delete(key: string): Promise<unknown> }, keyId: string): Promise<void> {
  await callDependency("KV", () => kv.delete(idName(keyId)));
}

/** A new key's pointer, written before its account has it: a pointer to nothing yet finds the key unknown. */
export async function storeKeyPointer(kv: KvWriter, hash: string, record: ApiKeyRecord): Promise<void> {
  const pointer: KeyPointer = { keyId: record.id, account: accountOf(record) };
  await callDependency("KV", () => kv.put(pointerName(hash), JSON.stringify(pointer)));
}

/** A key's entry by id, as its account now has it: its account, and its summary for the search. */
export async function projectKey(kv: KvWriter, record: ApiKeyRecord): Promise<void> {
  const { id, ...summary } = record;
  await callDependency("KV", () => kv.put(idName(id), accountOf(record), { metadata: summary }));
}
