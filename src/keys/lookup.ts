import { callDependency } from "../lib/call-dependency";
import type { TtlCache } from "../lib/ttl-cache";
import { sha256Hex } from "../lib/digest";
import { idName, recordName } from "./kv-layout";
import { ApiKeyRecord } from "../account/key-record";

/**
 * Lifetimes of the per-isolate key cache. They bound how long a revoked key
 * keeps working in one isolate on top of KV's own propagation (about 60 s),
 * and how long a key created a moment ago can stay unknown where it was just
 * tried: misses are kept more briefly than hits.
 */
const KEY_CACHE_HIT_MS = 5_000;
const KEY_CACHE_MISS_MS = 1_000;
// KV's edge cache lifetime; 60 s is its default and adds no delay beyond propagation.
const KV_CACHE_TTL_SECONDS = 60;

/**
 * What KV holds for a key: its record, nothing, or a record that does not fit the schema (what is wrong, never the
 * values).
 */
export type StoredKey =
  | { kind: "found"; record: ApiKeyRecord }
  | { kind: "unknown" }
  | { kind: "invalid"; problems: string };

function readRecord(stored: unknown): StoredKey {
  if (stored === null) return { kind: "unknown" };
  const parsed = ApiKeyRecord.safeParse(stored);
  if (parsed.success) return { kind: "found", record: parsed.data };
  return {
    kind: "invalid",
    problems: parsed.error.issues.map((issue) => `${issue.path.join(".") || "record"}: ${issue.message}`).join("; "),
  };
}

/**
 * What KV holds for an API key, through the isolate's cache (isolate-memory.ts):
 * kept under the key as presented, so a hit costs no digest (the request
 * carried the key into this memory anyway; only its hash names it in KV, and
 * neither reaches a log or an error); only a valid record is kept as long as a hit.
 */
export async function findApiKey(
  kv: KVNamespace,
  token: string,
  cache: TtlCache<string, StoredKey>,
  now = Date.now(),
): Promise<StoredKey> {
  const cached = cache.get(token, now);
  if (cached !== undefined) return cached;

  const hash = await sha256Hex(token);
  const stored = await callDependency("KV", () =>
    kv.get<unknown>(recordName(hash), { type: "json", cacheTtl: KV_CACHE_TTL_SECONDS }),
  );
  const found = readRecord(stored);
  cache.set(token, found, found.kind === "found" ? KEY_CACHE_HIT_MS : KEY_CACHE_MISS_MS, now);
  return found;
}

/**
 * A key's record by its id, and the hash it is stored under, for the operator API (two KV reads, no cache: operators
 * want what KV holds now).
 */
/** A key's record and the hash of the key it is stored under. */
export interface StoredKeyRecord {
  hash: string;
  record: ApiKeyRecord;
}

export async function findApiKeyById(kv: KVNamespace, keyId: string): Promise<StoredKeyRecord | null> {
  const hash = (await callDependency("KV", () => kv.get(idName(keyId))))?.trim();
  if (hash === undefined) return null;
  const stored = await callDependency("KV", () => kv.get<unknown>(recordName(hash), { type: "json" }));
  return stored === null ? null : { hash, record: ApiKeyRecord.parse(stored) };
}

/**
 * A key's record by its id, through the isolate's cache, for a console
 * session (console/): kept as briefly as a key's record is, so a revocation
 * or expiry ends the session when it ends the key's own requests. Null for
 * no key, or a record that does not fit.
 */
export async function findUsableRecordById(
  kv: KVNamespace,
  keyId: string,
  cache: TtlCache<string, ApiKeyRecord | null>,
  now = Date.now(),
): Promise<ApiKeyRecord | null> {
  const cached = cache.get(keyId, now);
  if (cached !== undefined) return cached;
  const hash = (await callDependency("KV", () => kv.get(idName(keyId), { cacheTtl: KV_CACHE_TTL_SECONDS })))?.trim();
  const stored =
    hash === undefined
      ? null
      : await callDependency("KV", () =>
          kv.get<unknown>(recordName(hash), { type: "json", cacheTtl: KV_CACHE_TTL_SECONDS }),
        );
  const found = readRecord(stored);
  const record = found.kind === "found" ? found.record : null;
  cache.set(keyId, record, record ? KEY_CACHE_HIT_MS : KEY_CACHE_MISS_MS, now);
  return record;
}
