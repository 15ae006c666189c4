/**
 * Where a key lives in KV (docs/operations.md#api-keys): its record under the SHA-256
 * of the key, and an entry that leads from its id back to that hash, for
 * revoking by id. The key itself is never stored.
 */
import type { ApiKeyRecord } from "./api-key-record";

export const recordName = (hash: string) => `key:${hash}`;
export const idName = (keyId: string) => `id:${keyId}`;

/** Summary kept as metadata on `id:` entries so listing keys is one KV list call. */
export type KeySummary = Omit<ApiKeyRecord, "id">;

interface KvEntry {
  key: string;
  value: string;
  metadata?: KeySummary;
}

/** The two KV entries that make up one stored key: written alike by `npm run keys` and by the operator API's revoke. */
export function keyEntries(hash: string, record: ApiKeyRecord): KvEntry[] {
  const { id, ...summary } = record;
  return [
    { key: recordName(hash), value: JSON.stringify(record) },
    { key: idName(id), value: hash, metadata: summary },
  ];
}
