/**
 * What Cloudflare bills a request for, counted where the Worker makes each
 * call (docs/design/performance.md#what-a-million-requests-cost): the
 * bindings wrapped, and the two globals the service reaches (the Cache API
 * and fetch). Used by the bench's cost rows and by the test that holds each
 * operation's counts (test/workers/app/billed-calls.test.ts). A Durable
 * Object's own storage (its SQLite rows) is not seen from here: it is billed
 * per row its object reads and writes, and stated beside the counts.
 */
import type { BilledCalls } from "./operation-costs";

const KV_READS = new Set(["get", "getWithMetadata"]);
const KV_WRITES = new Set(["put", "delete"]);

/** A method of `target`, bound to it, for a proxy that passes everything else through. */
function passThrough(target: object, property: string | symbol): unknown {
  const value = Reflect.get(target, property);
  return typeof value === "function" ? value.bind(target) : value;
}

function countedKv(kv: KVNamespace, calls: BilledCalls): KVNamespace {
  return new Proxy(kv, {
    get(target, property) {
      const value = passThrough(target, property);
      if (typeof value !== "function" || typeof property !== "string") return value;
      return (...args: unknown[]) => {
        if (KV_READS.has(property)) calls.kvReads += 1;
        else if (KV_WRITES.has(property)) calls.kvWrites += 1;
        else if (property === "list") calls.kvLists += 1;
        return (value as (...a: unknown[]) => unknown)(...args);
      };
    },
  });
}

type Meta = { rows_read?: number; rows_written?: number };
const noteMeta = (calls: BilledCalls, meta: Meta | undefined) => {
  calls.d1RowsRead += meta?.rows_read ?? 0;
  calls.d1RowsWritten += meta?.rows_written ?? 0;
};

/** A statement whose runs are counted with the rows D1 says they read and wrote. */
function countedStatement(statement: D1PreparedStatement, calls: BilledCalls): D1PreparedStatement {
  const all = async () => {
    calls.d1Queries += 1;
    const result = await statement.all();
    noteMeta(calls, result.meta as Meta);
    return result;
  };
  return new Proxy(statement, {
    get(target, property) {
      switch (property) {
        case "bind":
          return (...values: unknown[]) => countedStatement(target.bind(...values), calls);
        case "all":
          return all;
        case "run":
          return async () => {
            calls.d1Queries += 1;
            const result = await target.run();
            noteMeta(calls, result.meta as Meta);
            return result;
          };
        case "first":
          // first() answers no meta: the same statement run whole, its first row taken.
          return async (column?: string) => {
            const row = ((await all()).results[0] ?? null) as Record<string, unknown> | null;
            return column === undefined ? row : (row?.[column] ?? null);
          };
        case "raw":
          return async (options?: { columnNames?: boolean }) => {
            const { results } = await all();
            const rows = (results as Record<string, unknown>[]).map((row) => Object.values(row));
            return options?.columnNames ? [Object.keys(results[0] ?? {}), ...rows] : rows;
          };
        default:
          return passThrough(target, property);
      }
    },
  });
}

function countedD1<T extends D1Database | D1DatabaseSession>(db: T, calls: BilledCalls): T {
  return new Proxy(db, {
    get(target, property) {
      if (property === "prepare") return (sql: string) => countedStatement(target.prepare(sql), calls);
      if (property === "batch")
        return async (statements: D1PreparedStatement[]) => {
          // The statements are counted ones: run as a batch, they are counted here, once each.
          calls.d1Queries += statements.length;
          const results = await target.batch(statements);
          for (const result of results) noteMeta(calls, result.meta as Meta);
          return results;
        };
      if (property === "withSession")
        return (constraint?: string) => countedD1((target as D1Database).withSession(constraint), calls);
      return passThrough(target, property);
    },
  });
}

/**
 * A Durable Object stub whose every method call (whichever the app makes) goes through `around`, which runs the
 * call when it chooses: counted here, counted and delayed by the bench's far limiter (bench/worker.ts).
 */
export function aroundCalls<T extends object>(stub: T, around: (call: () => Promise<unknown>) => unknown): T {
  return new Proxy(stub, {
    get(target, property) {
      if (property === "then") return undefined;
      const value = Reflect.get(target, property);
      if (typeof value !== "function") return value;
      // Reflect.apply: an RPC method's own `.apply` would be a call of a remote method named so.
      return (...args: unknown[]) => around(() => Reflect.apply(value, target, args) as Promise<unknown>);
    },
  });
}

/** A stub whose every method call counts as one request to its object. */
const countedStub = <T extends object>(stub: T, calls: BilledCalls): T =>
  aroundCalls(stub, (call) => {
    calls.doRequests += 1;
    return call();
  });

function countedNamespace<T extends object>(namespace: T, calls: BilledCalls): T {
  return new Proxy(namespace, {
    get(target, property) {
      const value = passThrough(target, property);
      if (property === "get" || property === "getByName")
        return (...args: unknown[]) => countedStub((value as (...a: unknown[]) => object)(...args), calls);
      return value;
    },
  });
}

function countedAnalytics(dataset: AnalyticsEngineDataset, calls: BilledCalls): AnalyticsEngineDataset {
  return {
    writeDataPoint(point) {
      calls.analyticsPoints += 1;
      dataset.writeDataPoint(point);
    },
  };
}

/** The bindings the service is billed through, each counting into `calls`; every other binding as it is. */
export function countedEnv<E extends Env>(env: E, calls: BilledCalls): E {
  return {
    ...env,
    API_KEYS: countedKv(env.API_KEYS, calls),
    DB: countedD1(env.DB, calls),
    ACCOUNTS: countedNamespace(env.ACCOUNTS, calls),
    WEBHOOK_DISPATCHER: countedNamespace(env.WEBHOOK_DISPATCHER, calls),
    WEBHOOK_LANES: countedNamespace(env.WEBHOOK_LANES, calls),
    REQUESTS: countedAnalytics(env.REQUESTS, calls),
  };
}

/**
 * Counts the Cache API's operations and fetch()'s subrequests into `calls` until the returned function is called:
 * globals, so one measurement at a time.
 */
export function countGlobals(calls: BilledCalls): () => void {
  const open = caches.open.bind(caches);
  const fetched = globalThis.fetch;
  caches.open = async (name: string) => {
    const cache = await open(name);
    return new Proxy(cache, {
      get(target, property) {
        const value = passThrough(target, property);
        if (property !== "match" && property !== "put" && property !== "delete") return value;
        return (...args: unknown[]) => {
          calls.cacheOps += 1;
          return (value as (...a: unknown[]) => unknown)(...args);
        };
      },
    });
  };
  globalThis.fetch = (input, init) => {
    calls.subrequests += 1;
    return fetched(input, init);
  };
  return () => {
    caches.open = open;
    globalThis.fetch = fetched;
  };
}

/**
 * A Durable Object's storage counting the rows Cloudflare bills its object for
 * (docs/design/performance.md#what-a-million-requests-cost): what its SQL
 * statements read and wrote, by workerd's own count, and one row written for
 * each key-value put, each delete of a key that was there, and each
 * setAlarm(). Patched in place, so the object's own entry points (a method
 * called on it, its alarm) are what is counted; `restore` undoes it.
 */
export function countStorage(storage: DurableObjectStorage): {
  rows(): { read: number; written: number };
  restore(): void;
} {
  const { sql, kv } = storage;
  const exec = sql.exec;
  const put = kv.put;
  const remove = kv.delete;
  const setAlarm = storage.setAlarm;
  const cursors: SqlStorageCursor<Record<string, SqlStorageValue>>[] = [];
  let written = 0;
  sql.exec = ((query: string, ...bindings: unknown[]) => {
    const cursor = exec.call(sql, query, ...bindings);
    cursors.push(cursor);
    return cursor;
  }) as SqlStorage["exec"];
  kv.put = ((key: string, value: unknown) => {
    written += 1;
    return put.call(kv, key, value);
  }) as typeof kv.put;
  kv.delete = ((key: string) => {
    if (kv.get(key) !== undefined) written += 1;
    return remove.call(kv, key);
  }) as typeof kv.delete;
  storage.setAlarm = ((...args: Parameters<DurableObjectStorage["setAlarm"]>) => {
    written += 1;
    return setAlarm.apply(storage, args);
  }) as DurableObjectStorage["setAlarm"];
  return {
    // Read once the statements' cursors are spent: a cursor counts the rows as they are stepped through.
    rows: () => ({
      read: cursors.reduce((sum, cursor) => sum + cursor.rowsRead, 0),
      written: written + cursors.reduce((sum, cursor) => sum + cursor.rowsWritten, 0),
    }),
    restore() {
      sql.exec = exec;
      kv.put = put;
      kv.delete = remove;
      storage.setAlarm = setAlarm;
    },
  };
}
