import { callDependency } from "../lib/dependency";
import { TtlCache } from "../lib/ttl-cache";
import { idName, recordName, sha256Hex } from "./layout";
import { ApiKeyRecord } from "./schemas";


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

const cache = new TtlCache<string, ApiKeyRecord | null>(10_000);

/** The record of an API key, or null when KV has none. Cached by the key's hash, never the key. */
export async function findApiKey(kv: KVNamespace, token: string, now = Date.now()): Promise<ApiKeyRecord | null> {
  const hash = await sha256Hex(token);
  const cached = cache.get(hash, now);
  if (cached !== undefined) return cached;

  const stored = await callDependency("KV", () =>
    kv.get<unknown>(recordName(hash), { type: "json", cacheTtl: KV_CACHE_TTL_SECONDS }),
  );
  const record = stored === null ? null : ApiKeyRecord.parse(stored);
  cache.set(hash, record, record ? KEY_CACHE_HIT_MS : KEY_CACHE_MISS_MS, now);
  return record;
}

/** A key's record by its id, for the operator API (two KV reads, no cache: operators want what KV holds now). */
export async function findApiKeyById(kv: KVNamespace, keyId: string): Promise<ApiKeyRecord | null> {
  const hash = await callDependency("KV", () => kv.get(idName(keyId)));
  if (hash === null) return null;
  const stored = await callDependency("KV", () => kv.get<unknown>(recordName(hash.trim()), { type: "json" }));
  return stored === null ? null : ApiKeyRecord.parse(stored);
}
