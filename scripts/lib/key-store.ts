/**
 * API keys in the API_KEYS namespace of one environment, with the audit in
 * its D1: locally through the same storage `npm start` serves from (wrangler's
 * platform proxy, one local runtime for the whole command), remotely through
 * `wrangler --remote --env <name>` for staging and production.
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir, userInfo } from "node:os";
import { join } from "node:path";
import {
  DELETE_KEY_EVENT,
  INSERT_KEY_EVENT,
  KEY_HISTORY,
  MARK_KEY_EVENT_UNKNOWN,
  keyEventOf,
  keyEventValues,
  withAuditRow,
  type KeyEvent,
  type KeyEventRow,
} from "../../src/keys/audit";
import { idName, recordName } from "../../src/keys/kv-layout";
import { sha256Hex } from "../../src/lib/digest";
import { ApiKeyRecord, budgetOf } from "../../src/keys/api-key-record";
import { keyEntries, type KeySummary } from "../../src/keys/kv-layout";
import { newApiKey, type KeyOptions } from "../../src/keys/issue-key";
import { openLocalState, type LocalState } from "./local-state";
import { mustRunWrangler } from "./wrangler";

export const ENVIRONMENTS = ["local", "staging", "production"] as const;
export type Environment = (typeof ENVIRONMENTS)[number];

/** A key's record and the hash it is stored under. */
export interface StoredRecord {
  hash: string;
  record: ApiKeyRecord;
}

type AuditEvent = Omit<KeyEvent, "id" | "at" | "actor" | "outcome">;

export interface KeyStore {
  environment: Environment;
  get(name: string): Promise<string | null>;
  list(prefix: string): Promise<{ name: string; metadata?: KeySummary }[]>;
  /** Writes records together, so the keys of a budget never disagree for long. */
  putRecords(records: StoredRecord[]): Promise<void>;
  /**
   * Runs `operation` with its audit rows: written first, taken back when the
   * operation fails, so an operation and its rows happen together (docs/operations.md#api-keys).
   */
  audited<T>(events: AuditEvent[], operation: () => Promise<T>): Promise<T>;
  history(keyId: string): Promise<KeyEvent[]>;
  /**
   * Runs one statement on the environment's database with its values bound (the operators' table), returning its rows.
   */
  query<T>(statement: string, values: readonly (string | number)[]): Promise<T[]>;
  close(): Promise<void>;
}

/** Who runs the keys command, for the audit. */
export const CLI_ACTOR = `cli:${userInfo().username}`;

const auditRows = (events: AuditEvent[]) => {
  const at = new Date().toISOString();
  // Each row's event id is made here, once: the inserts' retries (a busy local database) carry the same one.
  return events.map((event) => keyEventValues({ ...event, id: crypto.randomUUID(), at, actor: CLI_ACTOR }));
};

/**
 * The local SQLite files are shared with `npm start`'s runtime (and any other
 * command's): a read or write that meets another's lock is tried again for up
 * to 5 s rather than failing. Mostly the lock does not say its name: workerd
 * logs SQLITE_BUSY (or SQLITE_BUSY_SNAPSHOT, a read begun before the other
 * runtime's write) and hands the database's caller an internal error with a
 * reference, which Miniflare's D1 reports as "Failed to parse body as JSON,
 * got: Error: internal error; reference = …". A served state under load met
 * it in 3 of 60 rounds of create, rotate, update and history.
 */
const LOCKED = /SQLITE_BUSY|database is locked|internal error; reference = /;

export async function whenFree<T>(operation: () => Promise<T>): Promise<T> {
  for (let attempt = 1; ; attempt++) {
    try {
      return await operation();
    } catch (error) {
      if (attempt >= 50 || !LOCKED.test(String(error))) throw error;
      await new Promise((resolve) => setTimeout(resolve, 100));
    }
  }
}

/**
 * The keys of the local state (the folder `npm start` persists to), open for the whole command; closing the store
 * closes the state.
 */
export function localKeyStore(state: LocalState): KeyStore {
  const { API_KEYS: kv, DB: db } = state.env;
  return {
    environment: "local",
    get: (name) => kv.get(name),
    async list(prefix) {
      const names: { name: string; metadata?: KeySummary }[] = [];
      for (let cursor: string | undefined, complete = false; !complete; ) {
        const page = await kv.list({ prefix, ...(cursor && { cursor }) });
        complete = page.list_complete;
        cursor = page.list_complete ? undefined : page.cursor;
        names.push(...page.keys.map(({ name, metadata }) => ({ name, metadata: metadata as KeySummary | undefined })));
      }
      return names;
    },
    async putRecords(records) {
      for (const entry of records.flatMap(({ hash, record }) => keyEntries(hash, record))) {
        await whenFree(() => kv.put(entry.key, entry.value, entry.metadata && { metadata: entry.metadata }));
      }
    },
    audited(events, operation) {
      return withAuditRow(
        async () =>
          Promise.all(
            auditRows(events).map(
              async (values) =>
                (await whenFree(() =>
                  db
                    .prepare(INSERT_KEY_EVENT)
                    .bind(...values)
                    .first<number>("id"),
                ))!,
            ),
          ),
        {
          remove: async (rowIds) =>
            Promise.all(rowIds.map((id) => whenFree(() => db.prepare(DELETE_KEY_EVENT).bind(id).run()))),
          markUnknown: async (rowIds) =>
            Promise.all(rowIds.map((id) => whenFree(() => db.prepare(MARK_KEY_EVENT_UNKNOWN).bind(id).run()))),
        },
        operation,
      );
    },
    async history(keyId) {
      return (await whenFree(() => db.prepare(KEY_HISTORY).bind(keyId).all<KeyEventRow>())).results.map(keyEventOf);
    },
    async query<T>(statement: string, values: readonly (string | number)[]) {
      return (
        await whenFree(() =>
          db
            .prepare(statement)
            .bind(...values)
            .all<T>(),
        )
      ).results;
    },
    close: () => state.dispose(),
  };
}

/** An SQL string literal. */
const literal = (text: string) => `'${text.replaceAll("'", "''")}'`;
/** A bound statement written out with literals: wrangler's d1 execute takes no parameters. */
const inline = (sql: string, values: readonly (string | number)[]) =>
  sql.replace(/\?(\d+)/g, (_, n: string) => {
    const value = values[Number(n) - 1]!;
    return typeof value === "number" ? String(value) : literal(value);
  });
const statements = (template: string, rows: (string | number)[][]) =>
  rows.map((values) => inline(template, values)).join(";\n");

type D1Results<T> = { results: T[] }[];

/** A deployed environment, through wrangler's remote commands (wrangler login or CLOUDFLARE_API_TOKEN). */
function remoteKeyStore(environment: Exclude<Environment, "local">): KeyStore {
  const where = ["--remote", "--env", environment];
  const target = ["--binding", "API_KEYS", ...where];
  const sql = (command: string, json = false) =>
    mustRunWrangler(["d1", "execute", "DB", ...where, "--command", command, ...(json ? ["--json"] : [])]);

  return {
    environment,
    async get(name) {
      const out = mustRunWrangler(["kv", "key", "get", name, ...target]);
      // wrangler reports a missing key on stdout, with exit code 0.
      return out.trim() === "Value not found" ? null : out;
    },
    async list(prefix) {
      return JSON.parse(mustRunWrangler(["kv", "key", "list", "--prefix", prefix, ...target]));
    },
    async putRecords(records) {
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
      return withAuditRow(
        async () =>
          (JSON.parse(sql(statements(INSERT_KEY_EVENT, auditRows(events)), true)) as D1Results<{ id: number }>).map(
            (result) => result.results[0]!.id,
          ),
        {
          remove: async (rowIds) =>
            sql(
              statements(
                DELETE_KEY_EVENT,
                rowIds.map((id) => [id]),
              ),
            ),
          markUnknown: async (rowIds) =>
            sql(
              statements(
                MARK_KEY_EVENT_UNKNOWN,
                rowIds.map((id) => [id]),
              ),
            ),
        },
        operation,
      );
    },
    async history(keyId) {
      const [{ results }] = JSON.parse(sql(inline(KEY_HISTORY, [keyId]), true)) as D1Results<KeyEventRow>;
      return results.map(keyEventOf);
    },
    async query<T>(statement: string, values: readonly (string | number)[]) {
      const [{ results }] = JSON.parse(sql(inline(statement, values), true)) as D1Results<T>;
      return results;
    },
    close: async () => {},
  };
}

/** The key store of an environment; `persistTo` is the local state folder (local only). Close it when done. */
export function openKeyStore(environment: Environment, persistTo?: string): Promise<KeyStore> {
  return environment === "local"
    ? openLocalState(persistTo).then(localKeyStore)
    : Promise.resolve(remoteKeyStore(environment));
}

export async function storedRecordOf(store: KeyStore, key: string): Promise<ApiKeyRecord | null> {
  const stored = await store.get(recordName(await sha256Hex(key)));
  return stored === null ? null : ApiKeyRecord.parse(JSON.parse(stored));
}

/** The record and hash behind a key id, or null for an id this environment does not know. */
export async function findById(store: KeyStore, keyId: string): Promise<StoredRecord | null> {
  const hash = (await store.get(idName(keyId)))?.trim();
  if (!hash) return null;
  const stored = await store.get(recordName(hash));
  return stored === null ? null : { hash, record: ApiKeyRecord.parse(JSON.parse(stored)) };
}

/**
 * Every key that spends the budget `record` spends (itself included): the keys a rotation made, or the key they
 * replaced.
 */
export async function keysOfBudget(store: KeyStore, record: ApiKeyRecord): Promise<StoredRecord[]> {
  const budget = budgetOf(record);
  const ids = (await store.list("id:"))
    .map(({ name, metadata }) => ({ id: name.slice(idName("").length), budget: metadata?.budget }))
    .filter((key) => budgetOf(key) === budget);
  const found = await Promise.all(ids.map((key) => findById(store, key.id)));
  return found.filter((key): key is StoredRecord => key !== null);
}

/** Makes a new key, stores only its hash, audits its creation, and returns the key: the one time it is ever seen. */
export async function issueKey(
  store: KeyStore,
  options: KeyOptions,
  changes: Record<string, unknown> = {},
): Promise<{ key: string; record: ApiKeyRecord }> {
  const { key, record } = newApiKey(store.environment === "production" ? "so_live_" : "so_test_", options);
  const { name, plan, limits, scopes, expiresAt } = record;
  const created = {
    plan,
    name,
    ...(limits && { limits }),
    ...(scopes && { scopes }),
    ...(expiresAt && { expiresAt }),
    ...changes,
  };
  await store.audited([{ operation: "create", keyId: record.id, changes: created }], async () =>
    store.putRecords([{ hash: await sha256Hex(key), record }]),
  );
  return { key, record };
}
