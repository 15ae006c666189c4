/**
 * API keys in the API_KEYS namespace of one environment, read and written
 * through wrangler: `--local` (optionally another state folder) for local,
 * `--remote --env <name>` for staging and production.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import { DELETE_KEY_EVENT, INSERT_KEY_EVENT, KEY_HISTORY, keyEventOf, keyEventValues, withAuditRow, type KeyEvent, type KeyEventRow } from "../../src/keys/audit";
import { idName, recordName, sha256Hex } from "../../src/keys/layout";
import { ApiKeyRecord, budgetOf } from "../../src/keys/schemas";
import { keyEntries, newApiKey, type KeyOptions, type KeySummary } from "./issue-key";
import { mustRunWrangler } from "./wrangler";

export const ENVIRONMENTS = ["local", "staging", "production"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

/** A key's record and the hash it is stored under. */
export interface StoredRecord {
  hash: string;
  record: ApiKeyRecord;
}

export interface KeyStore {
  environment: Environment;
  get(name: string): string | null;
  list(prefix: string): { name: string; metadata?: KeySummary }[];
  /** Writes records in one bulk write, so the keys of a budget never disagree for long. */
  putRecords(records: StoredRecord[]): void;
  /**
   * Runs `operation` with its audit rows: written first, taken back when the
   * operation fails, so an operation and its rows happen together (README, "API keys").
   */
  audited<T>(events: Omit<KeyEvent, "at" | "actor">[], operation: () => T | Promise<T>): Promise<T>;
  history(keyId: string): KeyEvent[];
}

/** An SQL string literal. */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
/** A bound statement written out with literals: wrangler's d1 execute takes no parameters. */
const inline = (sql: string, values: readonly (string | number)[]) =>
  sql.replace(/\?(\d+)/g, (_, n: string) => {
    const value = values[Number(n) - 1]!;
    return typeof value === "number" ? String(value) : literal(value);
  });

/** Who runs the keys command, for the audit. */
const CLI_ACTOR = `cli:${userInfo().username}`;

type D1Results<T> = { results: T[] }[];

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
    putRecords(records) {
      // Every entry in one bulk write, so a key is never stored half-way.
      const dir = mkdtempSync(join(tmpdir(), "store-orders-keys-"));
      try {
        const file = join(dir, "entries.json");
        writeFileSync(file, JSON.stringify(records.flatMap(({ hash, record }) => keyEntries(hash, record))));
        mustRunWrangler(["kv", "bulk", "put", file, ...target]);
      } finally {
        rmSync(dir, { recursive: true, force: true });
      }
    },
    audited(events, operation) {
      const at = new Date().toISOString();
      const statements = (template: string, rows: (string | number)[][]) => rows.map((values) => inline(template, values)).join(";\n");
      return withAuditRow(
        async () => {
          const rows = events.map((event) => keyEventValues({ ...event, at, actor: CLI_ACTOR }));
          const results = JSON.parse(sql(statements(INSERT_KEY_EVENT, rows), true)) as D1Results<{ id: number }>;
          return results.map((result) => result.results[0]!.id);
        },
        async (rowIds) => sql(statements(DELETE_KEY_EVENT, rowIds.map((id) => [id]))),
        async () => operation(),
      );
    },
    history(keyId) {
      const [{ results }] = JSON.parse(sql(inline(KEY_HISTORY, [keyId]), true)) as D1Results<KeyEventRow>;
      return results.map(keyEventOf);
    },
  };
}

export async function storedRecordOf(store: KeyStore, key: string): Promise<ApiKeyRecord | null> {
  const stored = store.get(recordName(await sha256Hex(key)));
  return stored === null ? null : ApiKeyRecord.parse(JSON.parse(stored));
}

/** The record and hash behind a key id, or null for an id this environment does not know. */
export function findById(store: KeyStore, keyId: string): StoredRecord | null {
  const hash = store.get(idName(keyId))?.trim();
  if (!hash) return null;
  const stored = store.get(recordName(hash));
  return stored === null ? null : { hash, record: ApiKeyRecord.parse(JSON.parse(stored)) };
}

/** Every key that spends the budget `record` spends (itself included): the keys a rotation made, or the key they replaced. */
export function keysOfBudget(store: KeyStore, record: ApiKeyRecord): StoredRecord[] {
  const budget = budgetOf(record);
  return store
    .list("id:")
    .map(({ name, metadata }) => ({ id: name.slice(idName("").length), budget: metadata?.budget }))
    .filter((key) => budgetOf(key) === budget)
    .map((key) => findById(store, key.id))
    .filter((found): found is StoredRecord => found !== null);
}

/** Makes a new key, stores only its hash, audits its creation, and returns the key: the one time it is ever seen. */
export async function issueKey(store: KeyStore, options: KeyOptions, changes: Record<string, unknown> = {}): Promise<{ key: string; record: ApiKeyRecord }> {
  const { key, record } = newApiKey(store.environment === "production" ? "so_live_" : "so_test_", options);
  const { name, plan, limits, scopes, expiresAt } = record;
  const created = { plan, name, ...(limits && { limits }), ...(scopes && { scopes }), ...(expiresAt && { expiresAt }), ...changes };
  await store.audited([{ operation: "create", keyId: record.id, changes: created }], async () => store.putRecords([{ hash: await sha256Hex(key), record }]));
  return { key, record };
}
