/**
 * Where a key is found in KV (docs/operations.md#api-keys): under its SHA-256 a pointer to its id and account, and
 * under its id its account, both written once and never stale (the operators' search entry, which its account writes
 * after each change, is another: account/key-search-entries.ts). The key itself is never stored.
 */
import { z } from "zod";
import { accountOf, KeyId, type ApiKeyRecord } from "../account/key-record";
import { callDependency } from "../lib/call-dependency";

export const pointerName = (hash: string) => `key:${hash}`;
/** Where a key's account is found by its id (an operator's call, a link), never waiting on the search's entry. */
export const ownerName = (keyId: string) => `owner:${keyId}`;

/** What KV holds under `key:<sha256 hex>`: the key's id and its account. */
export const KeyPointer = z.strictObject({ keyId: KeyId, account: z.string().min(1) });
export type KeyPointer = z.infer<typeof KeyPointer>;

/** The part of a KV binding that stores entries. */
export interface KvWriter {
  put(key: string, value: string, options?: { metadata?: unknown }): Promise<unknown>;
}

/** A new key's pointer and owner, written before its account has it: pointing to nothing yet, the key is unknown. */
export async function storeKeyPointer(kv: KvWriter, hash: string, record: ApiKeyRecord): Promise<void> {
  const pointer: KeyPointer = { keyId: record.id, account: accountOf(record) };
  await callDependency("KV", () =>
    Promise.all([kv.put(pointerName(hash), JSON.stringify(pointer)), kv.put(ownerName(record.id), pointer.account)]),
  );
}
