/**
 * Where a key is found in KV (docs/operations.md#api-keys): under its SHA-256 a pointer to its id and account, written
 * once and never stale (its account writes the entry under its id: account/key-search-entries.ts). The key itself is
 * never stored.
 */
import { z } from "zod";
import { accountOf, KeyId, type ApiKeyRecord } from "../account/key-record";
import { callDependency } from "../lib/call-dependency";

export const pointerName = (hash: string) => `key:${hash}`;

/** What KV holds under `key:<sha256 hex>`: the key's id and its account. */
export const KeyPointer = z.strictObject({ keyId: KeyId, account: z.string().min(1) });
export type KeyPointer = z.infer<typeof KeyPointer>;

/** The part of a KV binding that stores entries. */
export interface KvWriter {
  put(key: string, value: string, options?: { metadata?: unknown }): Promise<unknown>;
}

/** A new key's pointer, written before its account has it: a pointer to nothing yet finds the key unknown. */
export async function storeKeyPointer(kv: KvWriter, hash: string, record: ApiKeyRecord): Promise<void> {
  const pointer: KeyPointer = { keyId: record.id, account: accountOf(record) };
  await callDependency("KV", () => kv.put(pointerName(hash), JSON.stringify(pointer)));
}
