/**
 * The local state `npm start` serves from (`.wrangler/state` unless
 * --persist-to says otherwise), opened through wrangler's platform proxy: one
 * local runtime for a whole command. `npm start` prepares the database
 * through it, where `wrangler d1 migrations apply --local` and `wrangler d1
 * execute --local` start a runtime for each migration and each file (28
 * migrations took 12 s of a 2-core machine's CPU). Migrations are recorded in
 * wrangler's own table, as wrangler records them, so `wrangler d1 migrations
 * list --local` and this agree on what is applied.
 */
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { getPlatformProxy, unstable_readConfig, unstable_splitSqlQuery } from "wrangler";

interface D1Statement {
  bind(...values: unknown[]): D1Statement;
  first<T>(column?: string): Promise<T | null>;
  run(): Promise<unknown>;
  all<T>(): Promise<{ results: T[] }>;
}

/** The parts of the local KV and D1 bindings the scripts use. */
export interface LocalBindings {
  API_KEYS: {
    get(key: string): Promise<string | null>;
    put(key: string, value: string, options?: { metadata?: unknown }): Promise<void>;
    list(options: {
      prefix: string;
      cursor?: string;
    }): Promise<{ keys: { name: string; metadata?: unknown }[]; list_complete: boolean; cursor?: string }>;
  };
  DB: {
    prepare(sql: string): D1Statement;
    batch(statements: D1Statement[]): Promise<unknown[]>;
  };
}

export interface LocalState {
  env: LocalBindings;
  dispose(): Promise<void>;
}

/**
 * Opens the state through a runtime that declares only what the scripts use:
 * wrangler.jsonc's D1 database and KV namespace, by the same ids, so the same
 * persisted files. The Worker's own configuration would declare its Durable
 * Objects too, whose classes the proxy cannot load: every command then
 * printed wrangler's and workerd's warnings about them, and an alarm
 * stored in the state started a scheduler that found no class to run.
 */
type D1Entry = { binding: string; database_name?: string; database_id?: string };
type KvEntry = { binding: string; id?: string };

export async function openLocalState(persistTo = ".wrangler/state"): Promise<LocalState> {
  const worker = unstable_readConfig({ config: "wrangler.jsonc" });
  const folder = mkdtempSync(join(tmpdir(), "store-orders-state-"));
  const configPath = join(folder, "wrangler.json");
  const storage = {
    name: worker.name,
    compatibility_date: worker.compatibility_date,
    compatibility_flags: worker.compatibility_flags,
    d1_databases: worker.d1_databases.map(({ binding, database_name, database_id }: D1Entry) => ({
      binding,
      database_name,
      database_id,
    })),
    kv_namespaces: worker.kv_namespaces.map(({ binding, id }: KvEntry) => ({ binding, id })),
  };
  writeFileSync(configPath, JSON.stringify(storage));
  try {
    const proxy = await getPlatformProxy<LocalBindings>({
      configPath,
      persist: { path: join(persistTo, "v3") },
      remoteBindings: false,
      envFiles: [],
    });
    return {
      env: proxy.env,
      dispose: async () => {
        await proxy.dispose();
        rmSync(folder, { recursive: true, force: true });
      },
    };
  } catch (error) {
    rmSync(folder, { recursive: true, force: true });
    throw error;
  }
}

/** wrangler's table of applied migrations: its default name, which wrangler.jsonc keeps. */
const MIGRATIONS_TABLE = "d1_migrations";

/**
 * Applies the migrations of `dir` the database has not had, in their numbers'
 * order, each with its row in the table of applied ones in one batch (one
 * transaction), as wrangler does. Returns the names applied. The bench's
 * runtime (bench/runtime.ts) migrates its fresh database with it too.
 */
export async function applyMigrations(db: LocalBindings["DB"], dir = "migrations"): Promise<string[]> {
  await db
    .prepare(
      `CREATE TABLE IF NOT EXISTS ${MIGRATIONS_TABLE}(id INTEGER PRIMARY KEY AUTOINCREMENT, name TEXT UNIQUE, ` +
        `applied_at TIMESTAMP DEFAULT CURRENT_TIMESTAMP NOT NULL)`,
    )
    .run();
  const applied = new Set(
    (await db.prepare(`SELECT name FROM ${MIGRATIONS_TABLE}`).all<{ name: string }>()).results.map(({ name }) => name),
  );
  const number = (name: string) => Number.parseInt(name.split("_")[0]!, 10);
  const files = readdirSync(dir).filter((name) => name.endsWith(".sql"));
  const gone = [...applied].filter((name) => !files.includes(name));
  if (gone.length > 0)
    throw new Error(
      `This local state was made by migrations that are no longer in ${dir}/ (${gone.slice(0, 3).join(", ")}` +
        `${gone.length > 3 ? ", …" : ""}): they became one baseline before the first release. Start the local ` +
        "state anew: rm -rf .wrangler/state (or your --persist-to folder), then npm start.",
    );
  const pending = files.filter((name) => !applied.has(name)).sort((a, b) => number(a) - number(b));
  for (const name of pending) {
    const statements = unstable_splitSqlQuery(readFileSync(join(dir, name), "utf8")).map((query) => db.prepare(query));
    await db.batch([...statements, db.prepare(`INSERT INTO ${MIGRATIONS_TABLE} (name) VALUES (?1)`).bind(name)]);
  }
  return pending;
}

/** Runs SQL of one or more statements in one batch (one transaction). */
export async function executeSql(db: LocalBindings["DB"], sql: string): Promise<void> {
  await db.batch(unstable_splitSqlQuery(sql).map((query) => db.prepare(query)));
}
