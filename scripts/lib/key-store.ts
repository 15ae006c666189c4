/**
 * API keys in the API_KEYS namespace of one environment, read and written
 * through wrangler: `--local` (optionally another state folder) for local,
 * `--remote --env <name>` for staging and production.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { idName, recordName, sha256Hex } from "../../src/keys/layout";
import { ApiKeyRecord } from "../../src/keys/schemas";
import { keyEntries, newApiKey, type KeyOptions, type KeySummary } from "./issue-key";
import { mustRunWrangler } from "./wrangler";

export const ENVIRONMENTS = ["local", "staging", "production"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

export type KeyOperation = "create" | "update" | "rotate" | "revoke" | "unban";

/** One row of the audit (the D1 table key_events): never a key or a hash. */
export interface KeyEvent {
  at: string;
  operation: KeyOperation;
  keyId: string;
  changes: Record<string, unknown>;
  actor: string;
}

export interface KeyStore {
  environment: Environment;
  get(name: string): string | null;
  list(prefix: string): { name: string; metadata?: KeySummary }[];
  putRecord(hash: string, record: ApiKeyRecord): void;
  /** Appends to the audit: who did what to which key. */
  record(operation: KeyOperation, keyId: string, changes: Record<string, unknown>): void;
  history(keyId: string): KeyEvent[];
}

/** An SQL string literal. */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;

export function keyStore(environment: Environment, persistTo?: string): KeyStore {
  const where = environment === "local" ? ["--local", ...(persistTo ? ["--persist-to", persistTo] : [])] : ["--remote", "--env", environment];
  const target = ["--binding", "API_KEYS", ...where];
  const sql = (command: string, json = false) =>
    mustRunWrangler(["d1", "execute", "DB", ...where, "--command", command, ...(json ? ["--json"] : [])]);

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
    record(operation, keyId, changes) {
      const values = [new Date().toISOString(), operation, keyId, JSON.stringify(changes), "cli"].map(literal).join(", ");
      sql(`INSERT INTO key_events (at, operation, key_id, changes, actor) VALUES (${values})`);
    },
    history(keyId) {
      const out = sql(`SELECT at, operation, key_id, changes, actor FROM key_events WHERE key_id = ${literal(keyId)} ORDER BY id`, true);
      const [{ results }] = JSON.parse(out) as [{ results: { at: string; operation: KeyOperation; key_id: string; changes: string; actor: string }[] }];
      return results.map((row) => ({ at: row.at, operation: row.operation, keyId: row.key_id, changes: JSON.parse(row.changes), actor: row.actor }));
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
export async function issueKey(store: KeyStore, options: KeyOptions): Promise<{ key: string; record: ApiKeyRecord }> {
  const { key, record } = newApiKey(store.environment === "production" ? "so_live_" : "so_test_", options);
  store.putRecord(await sha256Hex(key), record);
  return { key, record };
}
