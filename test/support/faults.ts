import { env } from "cloudflare:workers";
import type { Account } from "../../src/account/account";
import type { ApiKeyRecord } from "../../src/account/key-record";
import { ownerName, pointerName } from "../../src/keys/kv-layout";
import { sha256Hex } from "../../src/lib/digest";

/** Bindings that fail (or are watched) the way the outage and session tests need. */

/** A D1 binding whose every call fails, as when D1 is unreachable. */
export function failingD1(): { db: D1Database; calls: () => number } {
  let calls = 0;
  const fail = () => {
    calls += 1;
    return Promise.reject(new Error("D1_ERROR: Network connection lost. SELECT secret FROM orders"));
  };
  const statement = { bind: () => statement, first: fail, all: fail, run: fail, raw: fail };
  const db = {
    prepare: () => statement,
    batch: fail,
    exec: fail,
    withSession: () => db,
    getBookmark: () => null,
  } as unknown as D1Database;
  return { db, calls: () => calls };
}

type Batch = (statements: D1PreparedStatement[]) => Promise<D1Result[]>;

/** A property of `target`, with methods bound to it, as a transparent proxy passes it through. */
function passThrough(target: object, property: string | symbol): unknown {
  const value = Reflect.get(target, property);
  return typeof value === "function" ? value.bind(target) : value;
}

/** The real D1 binding, and every session opened on it, with batch() or prepare() replaced, or sessions observed. */
export function interceptD1(overrides: {
  batch?: (real: Batch, statements: D1PreparedStatement[]) => Promise<D1Result[]>;
  prepare?: (statement: D1PreparedStatement, sql: string) => D1PreparedStatement;
  onSession?: (constraint: string) => void;
}): D1Database {
  const wrap = <T extends D1Database | D1DatabaseSession>(real: T): T =>
    new Proxy(real, {
      get(target, property) {
        const { batch, prepare } = overrides;
        if (property === "withSession") {
          return (constraint: string) => {
            overrides.onSession?.(constraint);
            return wrap((target as D1Database).withSession(constraint));
          };
        }
        if (property === "batch" && batch)
          return (statements: D1PreparedStatement[]) => batch(target.batch.bind(target), statements);
        if (property === "prepare" && prepare) return (sql: string) => prepare(target.prepare(sql), sql);
        return passThrough(target, property);
      },
    });
  return wrap(env.DB);
}

/** The real D1, with batch() replaced: to fail, lose answers or delay, around the real call. */
export function withBatch(batch: (real: Batch, statements: D1PreparedStatement[]) => Promise<D1Result[]>): D1Database {
  return interceptD1({ batch });
}

/** The real D1, whose single-statement reads of rows (`all()`, `raw()`) fail while batches still work. */
export function failingReads(): D1Database {
  const failing = (statement: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(statement, {
      get(target, property) {
        if (property === "bind") return (...values: unknown[]) => failing(target.bind(...values));
        if (property === "all" || property === "raw")
          return () => Promise.reject(new Error("D1_ERROR: Network connection lost."));
        return passThrough(target, property);
      },
    });
  return interceptD1({ prepare: failing });
}

/** The real D1, counting the statements prepared on it: one per query, batched or not. */
export function countingD1(): { db: D1Database; queries: () => number } {
  let queries = 0;
  const db = interceptD1({
    prepare: (statement) => {
      queries += 1;
      return statement;
    },
  });
  return { db, queries: () => queries };
}

/**
 * The real D1, unreachable while `down` is true (every read, write and batch of it, sessions included): an outage for a
 * stretch.
 */
export function outageD1(): { db: D1Database; setDown(down: boolean): void; failedCalls(): number } {
  let down = false;
  let failed = 0;
  const unreachable = () => {
    failed += 1;
    return Promise.reject(new Error("D1_ERROR: Network connection lost."));
  };
  const guarded = (statement: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(statement, {
      get(target, property) {
        if (property === "bind") return (...values: unknown[]) => guarded(target.bind(...values));
        if (down && (property === "first" || property === "all" || property === "run" || property === "raw"))
          return unreachable;
        return passThrough(target, property);
      },
    });
  const db = interceptD1({ prepare: guarded, batch: (real, statements) => (down ? unreachable() : real(statements)) });
  return { db, setDown: (value) => void (down = value), failedCalls: () => failed };
}

/**
 * The real D1 with the platform's limit on queries per invocation enforced,
 * as production does and the local runtime does not: each statement run
 * counts (a batch counts each of its statements), and the one past `cap`
 * throws. `reset()` starts a new invocation.
 */
export function cappedD1(cap = 1_000): { db: D1Database; queries(): number; reset(): void } {
  let queries = 0;
  const spend = (count: number) => {
    queries += count;
    if (queries > cap)
      throw new Error(`D1_ERROR: Too many API requests by single worker invocation (${queries} > ${cap})`);
  };
  const counted = (statement: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(statement, {
      get(target, property) {
        if (property === "bind") return (...values: unknown[]) => counted(target.bind(...values));
        if (property === "first" || property === "all" || property === "run" || property === "raw") {
          return (...args: unknown[]) => {
            spend(1);
            return (Reflect.get(target, property) as (...a: unknown[]) => unknown).apply(target, args);
          };
        }
        return passThrough(target, property);
      },
    });
  const db = interceptD1({
    prepare: counted,
    batch: (real, statements) => {
      spend(statements.length);
      return real(statements);
    },
  });
  return { db, queries: () => queries, reset: () => void (queries = 0) };
}

/**
 * The real KV of API keys, counting every operation on it (reads, lists, writes, deletes): KV's limit is per
 * invocation, and Miniflare enforces none.
 */
export function countingKv(kv: KVNamespace = env.API_KEYS): {
  kv: KVNamespace;
  operations: () => number;
  reset(): void;
} {
  let operations = 0;
  const counted = new Set(["get", "getWithMetadata", "list", "put", "delete"]);
  const wrapped = new Proxy(kv, {
    get(target, property) {
      const value = passThrough(target, property);
      if (typeof property !== "string" || !counted.has(property) || typeof value !== "function") return value;
      return (...args: unknown[]) => {
        // A bulk read of many names is one operation as KV bills and limits it.
        operations += 1;
        return (value as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
  return { kv: wrapped, operations: () => operations, reset: () => void (operations = 0) };
}

/**
 * The KV of API keys as an edge location sees it for up to 60 s after a change (edgeKv), with one key's entries
 * read there already, before whatever the test changes next.
 */
export async function staleKeyKv(key: { key: string; record: ApiKeyRecord }, kv: KVNamespace = env.API_KEYS) {
  const edge = edgeKv(kv);
  await edge.seen(pointerName(await sha256Hex(key.key)), ownerName(key.record.id));
  return edge.kv;
}

/**
 * An edge location's view of the API keys' KV, as KV's cache makes it for up to 60 s: each name (and each list page)
 * read once from the store, then answered as it was then, whatever is written meanwhile; writes reach the store, not
 * this location's copies. `seen` reads names into the copy now, as a request at this location would have.
 */
export function edgeKv(kv: KVNamespace = env.API_KEYS): { kv: KVNamespace; seen(...names: string[]): Promise<void> } {
  const copies = new Map<string, Promise<{ value: string | null; metadata: unknown }>>();
  const copyOf = (name: string) => {
    if (!copies.has(name)) copies.set(name, kv.getWithMetadata(name, "text"));
    return copies.get(name)!;
  };
  const lists = new Map<string, Promise<unknown>>();
  const typed = (value: string | null, type: unknown) =>
    value !== null && (type === "json" || (type as { type?: string } | undefined)?.type === "json")
      ? JSON.parse(value)
      : value;
  const edge = new Proxy(kv, {
    get(target, property) {
      if (property === "get")
        return async (name: string | string[], type?: unknown) => {
          if (!Array.isArray(name)) return typed((await copyOf(name)).value, type);
          const read = async (each: string): Promise<[string, unknown]> => [
            each,
            typed((await copyOf(each)).value, type),
          ];
          return new Map(await Promise.all(name.map(read)));
        };
      if (property === "getWithMetadata")
        return async (name: string, type?: unknown) => {
          const { value, metadata } = await copyOf(name);
          return { value: typed(value, type), metadata, cacheStatus: null };
        };
      if (property === "list")
        return (options?: KVNamespaceListOptions) => {
          const page = JSON.stringify(options ?? {});
          if (!lists.has(page)) lists.set(page, target.list(options));
          return lists.get(page)!;
        };
      return passThrough(target, property);
    },
  });
  return { kv: edge, seen: async (...names) => void (await Promise.all(names.map(copyOf))) };
}

/**
 * The accounts' binding with another writer's change landing right after a call reads a key from its account and
 * before the call writes: `between` runs on that account's stub once the read has answered.
 */
export function accountsChangedAfterRead(
  between: (account: DurableObjectStub<Account>, keyId: string) => Promise<unknown>,
): Env["ACCOUNTS"] {
  return {
    getByName(name: string) {
      const stub = env.ACCOUNTS.getByName(name);
      return new Proxy(stub, {
        get: (target, property) =>
          property === "key"
            ? async (keyId: string) => {
                const read = await target.key(keyId);
                await between(target, keyId);
                return read;
              }
            : Reflect.get(target, property),
      });
    },
  } as unknown as Env["ACCOUNTS"];
}
