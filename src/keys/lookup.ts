/**
 * Finding a key's account, by the key presented (its KV pointer, cached per isolate) or by its id. Both are written
 * once, so a copy is as good as KV; what the key may do is its account's to say.
 */
import { accountStub } from "../account/account-stub";
import { callDependency } from "../lib/call-dependency";
import type { TtlCache } from "../lib/ttl-cache";
import { sha256Hex } from "../lib/digest";
import type { ApiKeyRecord } from "../account/key-record";
import { KeyPointer, ownerName, pointerName } from "./kv-layout";

/** A pointer is kept this long per isolate (it never changes); a miss briefly, so a key made a moment ago is found. */
const POINTER_HIT_MS = 300_000;
const POINTER_MISS_MS = 1_000;
// KV's edge cache lifetime: a pointer never changes, so only a miss (a key made a moment ago) waits on it.
const KV_CACHE_TTL_SECONDS = 60;

/** What KV holds for a key presented: its pointer, nothing, or an entry that does not fit (what is wrong). */
export type StoredKey =
  | { kind: "found"; pointer: KeyPointer }
  | { kind: "unknown" }
  | { kind: "invalid"; problems: string };

function readPointer(stored: unknown): StoredKey {
  if (stored === null) return { kind: "unknown" };
  const parsed = KeyPointer.safeParse(stored);
  if (parsed.success) return { kind: "found", pointer: parsed.data };
  return {
    kind: "invalid",
    problems: parsed.error.issues.map((issue) => `${issue.path.join(".") || "pointer"}: ${issue.message}`).join("; "),
  };
}

/** The pointer of a key presented, cached under the key as presented, so a hit costs no digest. */
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
    kv.get<unknown>(pointerName(hash), { type: "json", cacheTtl: KV_CACHE_TTL_SECONDS }),
  );
  const found = readPointer(stored);
  cache.set(token, found, found.kind === "found" ? POINTER_HIT_MS : POINTER_MISS_MS, now);
  return found;
}

/** The account of a key by its id (null: no such key), through a cache when given: it never changes. */
export async function accountOfKey(
  kv: KVNamespace,
  keyId: string,
  cache?: TtlCache<string, string | null>,
  now = Date.now(),
): Promise<string | null> {
  const cached = cache?.get(keyId, now);
  if (cached !== undefined) return cached;
  const account =
    (await callDependency("KV", () => kv.get(ownerName(keyId), { cacheTtl: KV_CACHE_TTL_SECONDS }))) ?? null;
  cache?.set(keyId, account, account === null ? POINTER_MISS_MS : POINTER_HIT_MS, now);
  return account;
}

/** A key as its account has it now, by id (null: no such key): an operator's view, never a copy. */
export async function findKeyById(env: Env, keyId: string): Promise<ApiKeyRecord | null> {
  const account = await accountOfKey(env.API_KEYS, keyId);
  if (account === null) return null;
  return callDependency("account", () => accountStub(env.ACCOUNTS, account).key(keyId));
}
