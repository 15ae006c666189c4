/**
 * API keys in the API_KEYS namespace of one environment, read and written
 * through wrangler: `--local` (optionally another state folder) for local,
 * `--remote --env <name>` for staging and production.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { idName, recordName, sha256Hex } from "../../src/keys/layout";
import { ApiKeyRecord, type Limits, type Plan, type Scope } from "../../src/keys/schemas";
import { keyEntries, newApiKey, type KeySummary } from "./issue-key";
import { mustRunWrangler } from "./wrangler";

export const ENVIRONMENTS = ["local", "staging", "production"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export interface KeyStore {
  environment: Environment;
  get(name: string): string | null;
  list(prefix: string): { name: string; metadata?: KeySummary }[];
  putRecord(hash: string, record: ApiKeyRecord): void;
}

export function keyStore(environment: Environment, persistTo?: string): KeyStore {
  const target =
    environment === "local"
      ? ["--binding", "API_KEYS", "--local", ...(persistTo ? ["--persist-to", persistTo] : [])]
      : ["--binding", "API_KEYS", "--remote", "--env", environment];

  return {
    environment,
    get(name) {
      const out = mustRunWrangler(["kv", "key", "get", name, ...target]);
      // wrangler reports a missing key on stdout, with exit code 0.
      return out.trim() === "Value not found" ? null : out;
    },
    list(prefix) {
      return JSON.parse(mustRunWrangler(["kv", "key", "list", "--prefix", prefix, ...target]));
    },
    putRecord(hash, record) {
      // Both entries in one bulk write, so a key is never stored half-way.
      const dir = mkdtempSync(join(tmpdir(), "store-orders-keys-"));
      try {
        const file = join(dir, "entries.json");
        writeFileSync(file, JSON.stringify(keyEntries(hash, record)));
        mustRunWrangler(["kv", "bulk", "put", file, ...target]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
  };
}

export async function storedRecordOf(store: KeyStore, key: string): Promise<ApiKeyRecord | null> {
  const stored = store.get(recordName(await sha256Hex(key)));
  return stored === null ? null : ApiKeyRecord.parse(JSON.parse(stored));
}

/** The record and hash behind a key id, or null for an id this environment does not know. */
export function findById(store: KeyStore, keyId: string): { hash: string; record: ApiKeyRecord } | null {
  const hash = store.get(idName(keyId))?.trim();
  if (!hash) return null;
  const stored = store.get(recordName(hash));
  return stored === null ? null : { hash, record: ApiKeyRecord.parse(JSON.parse(stored)) };
}

/** Makes a new key, stores only its hash, and returns the key: the one time it is ever seen. */
export async function issueKey(
  store: KeyStore,
  options: { plan: Plan; name: string; limits?: Limits; scopes?: Scope[]; expiresAt?: string },
): Promise<{ key: string; record: ApiKeyRecord }> {
  const { key, record } = newApiKey(store.environment === "production" ? "so_live_" : "so_test_", options);
  store.putRecord(await sha256Hex(key), record);
  return { key, record };
}
