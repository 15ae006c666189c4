/**
 * The benchmark's worker: the real app, and beside it in the same isolate the
 * baselines it is measured against and two set-up routes. Only `npm run bench`
 * runs it (bench/wrangler.jsonc); it is never deployed.
 */
import { Hono, type MiddlewareHandler } from "hono";
import { accessGuards, app, perRequestChain, routes } from "../src/app/worker";
import { REPLAY_LAYER } from "../src/account/rate-limit";
import { allowedMethods, matchRoute } from "../src/framework/operations/mount-routes";
import { corsPolicy } from "../src/framework/middleware/cors";
import { limitsFor, standingOf, type ApiKeyRecord } from "../src/account/key-record";
import { accessOf, type KeyRefused } from "../src/account/request-admission";
import { countedCallers } from "../src/keys/counted-callers";
import { accountStub } from "../src/account/account-stub";
import { ANONYMOUS_LIMITS } from "../src/account/plans";
import { quieterWindow } from "../src/account/policy";
import { aroundCalls } from "./billed-calls";
import {
  rateLimitHeaders,
  type RateLimitHeaders,
  type WrittenHeadersByWindow,
} from "../src/account/rate-limit-headers";
import type { AppEnv } from "../src/framework/app-env";
import { ApiError } from "../src/framework/api-error";
import { newApiKey, storeNewKey } from "../src/keys/issue-key";
import { identifyCaller } from "../src/keys/identify-caller";
import { requestParty } from "../src/keys/request-party";
import { handleError, handleNotFound } from "../src/framework/middleware/error-handler";
import { requestLog } from "../src/framework/middleware/request-log";
import { responseIdentity } from "../src/framework/middleware/response-identity";
import { loadConfig } from "../src/framework/middleware/load-config";
import { mountRoutes } from "../src/framework/operations/mount-routes";
import { listOrders } from "../src/orders/whole-list/list-orders-v1";
import { isolateMemory } from "../src/app/isolate-memory";
import { SCOPES, type Scope } from "../src/framework/operations/scopes";
import type { Limits } from "../src/account/plans";
import { DISPATCHER_NAME } from "../src/webhook-delivery/dispatcher-calls";

export { Account } from "../src/app/worker";
import service, { WebhookDispatcher as ServiceDispatcher, WebhookLane as ServiceLane } from "../src/app/worker";

/** The service's lane, and the size of each hand-off it was given since asked last (the paced cancels' row). */
export class WebhookLane extends ServiceLane {
  private handOffs: number[] = [];

  override enqueue(endpointId: string, seqs: readonly string[]): Promise<number> {
    this.handOffs.push(seqs.length);
    return super.enqueue(endpointId, seqs);
  }

  /** The hand-offs' sizes since the last call, and forgets them. */
  async takeHandOffs(): Promise<number[]> {
    const taken = this.handOffs;
    this.handOffs = [];
    return taken;
  }
}

/**
 * The service's dispatcher, with the passes it ran since asked last (the paced cancels' row), and a way to make it
 * hand out again what it handed out: the fan-out row's re-pass.
 */
export class WebhookDispatcher extends ServiceDispatcher {
  private passes = 0;

  override alarm(): Promise<void> {
    this.passes += 1;
    return super.alarm();
  }

  /** The passes since the last call, and forgets them. */
  async takePasses(): Promise<number> {
    const taken = this.passes;
    this.passes = 0;
    return taken;
  }

  /** Moves its mark (D1's and the highest it keeps) back by `events` and runs a pass now. */
  async rewind(events: number): Promise<string> {
    const highest = this.ctx.storage.kv.get<string>("highestMark");
    if (highest === undefined) throw new Error("the dispatcher has handed out nothing yet");
    const back = String(BigInt(highest) - BigInt(events));
    this.ctx.storage.kv.put("highestMark", back);
    await this.env.DB.prepare("UPDATE webhook_dispatch SET mark = CAST(?1 AS INTEGER) WHERE id = 1").bind(back).run();
    await this.ctx.storage.setAlarm(Date.now());
    return highest;
  }
}

const bench = new Hono<AppEnv>();

// The runtime's limit: routing and a JSON response, nothing else.
bench.get("/bench/bare", (c) => c.json([]));

// The data baseline: the list operation exactly as the service runs it, without keys, limits, logs or
// the cache (the fetch handler gives it bindings with ORDER_LIST_CACHE off): the query it all stands on.
// The baselines share the app's isolate memory, as the app's own routes do.
const list = listOrders(isolateMemory.listVersion, isolateMemory.ownWrites, isolateMemory.listFills);
bench.use("/bench/query/*", responseIdentity(), loadConfig(isolateMemory.configs));
mountRoutes(
  bench,
  [{ base: "/bench/query", operations: [{ ...list, public: true, scope: undefined, operator: undefined }] }],
  accessGuards,
);

// The data baseline as a deployed route would be: the same, with the request log line and the analytics point.
bench.use("/bench/query-logged/*", responseIdentity(), requestLog(requestParty), loadConfig(isolateMemory.configs));
mountRoutes(
  bench,
  [{ base: "/bench/query-logged", operations: [{ ...list, public: true, scope: undefined, operator: undefined }] }],
  accessGuards,
);

// The peer: the same authenticated list, limited by Cloudflare's rate limiting binding instead of the Durable Object.
bench.use(
  "/bench/peer/*",
  responseIdentity(),
  loadConfig(isolateMemory.configs),
  identifyCaller(isolateMemory.apiKeys),
  peerVerifies(),
  peerRateLimit(),
);
mountRoutes(bench, [{ base: "/bench/peer", operations: [list] }], accessGuards);
// The peer as this service would deploy it: the same, with the request log line and the analytics point.
bench.use(
  "/bench/peer-logged/*",
  responseIdentity(),
  requestLog(requestParty),
  loadConfig(isolateMemory.configs),
  identifyCaller(isolateMemory.apiKeys),
  peerVerifies(),
  peerRateLimit(),
);
mountRoutes(bench, [{ base: "/bench/peer-logged", operations: [list] }], accessGuards);
// The peer writing the same bytes as the list: the same CORS and rate-limit fields, their values computed as a user
// of the binding would have to (it answers only `success`): the key's limits, counts kept in the isolate, the
// windows' ends (docs/design/performance.md#the-lists-peer).
bench.use(
  "/bench/peer-same-bytes/*",
  responseIdentity(),
  requestLog(requestParty),
  corsPolicy(allowedMethods(routes)),
  loadConfig(isolateMemory.configs),
  identifyCaller(isolateMemory.apiKeys),
  peerVerifies(),
  peerRateLimit(peerHeaders),
);
mountRoutes(bench, [{ base: "/bench/peer-same-bytes", operations: [list] }], accessGuards);

/**
 * The key a peer was presented, verified as a user of the binding would: it answers only `success`, so the key's
 * record comes from its account, read once an isolate (kept for the run, as a user's cache would keep it).
 */
const peerRecords = new Map<string, ApiKeyRecord | undefined>();
const peerCallers = countedCallers();
function peerVerifies(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const caller = c.get("caller");
    if (caller.kind === "presented") {
      if (!peerRecords.has(caller.keyId))
        peerRecords.set(
          caller.keyId,
          (await accountStub(c.env.ACCOUNTS, caller.account).key(caller.keyId)) ?? undefined,
        );
      const record = peerRecords.get(caller.keyId);
      peerCallers.verified(c, { standing: standingOf(record, Date.now()), record, until: Number.POSITIVE_INFINITY });
    }
    await next();
  };
}

/**
 * The fixed cost's breakdown: the app's per-request chain cut after each of
 * its layers (0 to all), each ending in a bare 429 where the chain does not
 * refuse first. Driven with the banned key, the last is the banned row
 * without the route table; the differences between neighbours are each
 * layer's share.
 */
const breakdown = Array.from({ length: perRequestChain.length + 1 }, (_, cut) => {
  const partial = new Hono<AppEnv>();
  for (const [, handler] of perRequestChain.slice(0, cut)) partial.use(handler);
  partial.all("*", (c) => c.body(null, 429));
  partial.onError(handleError);
  return partial;
});

bench.get("/bench/breakdown", (c) => c.json({ layers: perRequestChain.map(([name]) => name) }));

/**
 * The app without the refusal replay before identification (account/rate-limit.ts): the same chain and routes
 * less that one layer, so the limited and banned rows show, side by side, what it buys.
 */
const withoutReplay = new Hono<AppEnv>();
withoutReplay.use(...perRequestChain.filter(([name]) => name !== REPLAY_LAYER).map(([, handler]) => handler));
mountRoutes(withoutReplay, routes, accessGuards);
withoutReplay.notFound(handleNotFound);
withoutReplay.onError(handleError);

/**
 * Replaces every order with `count` pending ones, ids 1..count, in one statement; the event feed then holds their
 * creations.
 */
bench.post("/bench/seed", async (c) => {
  const count = Number(c.req.query("orders"));
  if (!Number.isInteger(count) || count < 0) return c.json({ error: "orders must be a count" }, 400);
  // `statuses=mixed`: every fourth order pending, the rest shipped, delivered or cancelled (v2's filtered pages).
  const status =
    c.req.query("statuses") === "mixed"
      ? "CASE i % 4 WHEN 0 THEN 'pending' WHEN 1 THEN 'shipped' WHEN 2 THEN 'delivered' ELSE 'cancelled' END"
      : "'pending'";
  await c.env.DB.batch([
    c.env.DB.prepare("DELETE FROM orders"),
    c.env.DB.prepare("DELETE FROM order_events"),
    c.env.DB.prepare(
      `INSERT INTO orders (id, pet_id, quantity, ship_date, status, complete, created_at, updated_at)
       WITH RECURSIVE n(i) AS (SELECT 1 WHERE ?1 > 0 UNION ALL SELECT i + 1 FROM n WHERE i < ?1)
       SELECT i, i % 1000, 1 + i % 5, '2026-11-02T09:00:00.000Z', ${status}, 0,
              '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z' FROM n`,
    ).bind(count),
  ]);
  return c.json({ orders: count });
});

/** Hands the last `events` events to every endpoint again (their lanes add nothing): a dispatch pass's own cost. */
bench.post("/bench/dispatch-again", async (c) => {
  const events = Number(c.req.query("events"));
  const dispatcher = c.env.WEBHOOK_DISPATCHER.getByName(
    DISPATCHER_NAME,
  ) as unknown as DurableObjectStub<WebhookDispatcher>;
  return c.json({ mark: await dispatcher.rewind(events) });
});

/** The dispatcher's passes and one endpoint's hand-offs since asked last: how a stream of cancels is handed on. */
bench.post("/bench/hand-offs", async (c) => {
  const dispatcher = c.env.WEBHOOK_DISPATCHER.getByName(
    DISPATCHER_NAME,
  ) as unknown as DurableObjectStub<WebhookDispatcher>;
  const lane = c.env.WEBHOOK_LANES.getByName(c.req.query("endpoint")!) as unknown as DurableObjectStub<WebhookLane>;
  return c.json({ passes: await dispatcher.takePasses(), handOffs: await lane.takeHandOffs() });
});

/** Calls this isolate made to limiter objects, for the calls-per-admission figure. */
bench.get("/bench/calls", (c) => c.json({ calls: limiterCalls }));

async function storeKey(env: Env, limits: Limits, scopes?: Scope[]): Promise<string> {
  const { key, record } = newApiKey("so_test_", { plan: "enterprise", name: "bench", limits, scopes });
  await storeNewKey(env, key, record);
  return key;
}

/** One key with the limits asked for, for tests of limits across isolates. */
bench.post("/bench/key", async (c) =>
  c.json({
    key: await storeKey(c.env, { perMinute: Number(c.req.query("perMinute")), perDay: Number(c.req.query("perDay")) }),
  }),
);

/** Stores the benchmark's keys as `npm run keys` would: roomy ones, one that is always limited. */
bench.post("/bench/keys", async (c) => {
  const store = (limits: Limits) => storeKey(c.env, limits);
  return c.json({
    roomy: await store({ perMinute: 1_000_000_000, perDay: 1_000_000_000 }),
    far: await store({ perMinute: 1_000_000_000, perDay: 1_000_000_000 }),
    enterprise: await store({ perMinute: 100_000, perDay: 100_000_000 }),
    // Limited by its day, not its minute: a minute's turn during the row would admit one of its requests (run J's
    // warning).
    limited: await store({ perMinute: 1_000_000_000, perDay: 1 }),
    banned: await store({ perMinute: 1, perDay: 1_000_000_000 }),
    // Every scope: the delivery rows make their webhook endpoint with it.
    webhooks: await storeKey(c.env, { perMinute: 1_000_000_000, perDay: 1_000_000_000 }, [...SCOPES]),
    // The fan-out row's ten accounts, ten endpoints each.
    fanOut: await Promise.all(
      Array.from({ length: 10 }, () =>
        storeKey(c.env, { perMinute: 1_000_000_000, perDay: 1_000_000_000 }, [...SCOPES]),
      ),
    ),
  });
});

bench.onError(handleError);

/**
 * Cloudflare's rate limiting binding in front of the list; with `headers`, the rate-limit fields it does not give
 * written as the service writes them.
 */
function peerRateLimit(headers?: typeof peerHeaders): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const caller = c.get("caller");
    const id = caller.kind === "key" ? caller.key.id : caller.address;
    const { success } = await (c.env as Env & Pick<BenchEnv, "PEER_LIMITER">).PEER_LIMITER.limit({ key: id });
    if (headers) {
      const limits = caller.kind === "key" ? limitsFor(caller.key) : ANONYMOUS_LIMITS;
      const written = headers(id, limits, success, Date.now());
      for (const header in written) c.header(header, written[header as keyof typeof written]);
    }
    if (!success) throw new ApiError("rate_limit_exceeded", "Refused by the peer rate limiter.");
    // Counted, then held against what the operation asks of a key, as the service's step does.
    const verified = c.get("caller");
    const key =
      verified.kind === "key" ? { standing: "live" as const, record: verified.key, until: Infinity } : undefined;
    const need = matchRoute(c);
    const access = accessOf("admitted", key, need);
    if (access !== "allowed") throw peerCallers.refusal(c, access as KeyRefused, need!);
    await next();
  };
}

/** What a user of the binding counts to write the fields it does not give: per caller, this isolate's windows. */
const peerCounts = new Map<string, { minuteStart: number; minute: number; dayStart: number; day: number }>();
const peerWritten: WrittenHeadersByWindow = new WeakMap();

/** The service's rate-limit fields, from this isolate's counts: what the same-bytes peer writes. */
function peerHeaders(id: string, limits: Limits, success: boolean, now: number): RateLimitHeaders {
  const minuteStart = Math.floor(now / 60_000) * 60;
  const dayStart = Math.floor(now / 86_400_000) * 86_400;
  let count = peerCounts.get(id);
  if (count === undefined || count.dayStart !== dayStart) {
    count = { minuteStart, minute: 0, dayStart, day: 0 };
    peerCounts.set(id, count);
  }
  if (count.minuteStart !== minuteStart) Object.assign(count, { minuteStart, minute: 0 });
  if (success) {
    count.minute += 1;
    count.day += 1;
  }
  const report = <N extends "minute" | "day">(name: N, limit: number, used: number, start: number, size: number) => ({
    name,
    limit,
    size,
    remaining: Math.max(0, limit - used),
    reset: start + size,
  });
  const minute = report("minute", limits.perMinute, count.minute, minuteStart, 60);
  const day = report("day", limits.perDay, count.day, dayStart, 86_400);
  return rateLimitHeaders(
    {
      outcome: success ? "admitted" : "limited",
      now,
      minute,
      day,
      reported: quieterWindow({ minute, day }),
      retryAfter: success ? undefined : Math.max(1, minute.reset - Math.floor(now / 1000)),
    },
    peerWritten,
  );
}

let limiterCalls = 0;

/**
 * The limiter binding as the app sees it, counting the calls this isolate
 * makes, and delaying each by `delayMs` to stand in for an object far away.
 */
function limiterOf(env: Env, delayMs: number): Env["ACCOUNTS"] {
  const call = async <T>(work: () => Promise<T>) => {
    limiterCalls += 1;
    if (delayMs > 0) await new Promise((resolve) => setTimeout(resolve, delayMs));
    return work();
  };
  // Every method of the object, whichever the app calls (a lease's, a key's state, an Idempotency-Key's): a stand-in
  // with only some of them answered the others 503, and the webhook rows could not make their endpoint.
  return new Proxy(env.ACCOUNTS, {
    get(namespace, property) {
      if (property !== "getByName") return Reflect.get(namespace, property);
      return (name: string) => aroundCalls(namespace.getByName(name), call);
    },
  });
}

/**
 * D1 as the app sees it, with every query answered `delayMs` later, as from a
 * location far from the database: sessions, statements and batches alike.
 */
function delayedD1(db: D1Database, delayMs: number): D1Database {
  const later = <T>(work: () => Promise<T>) => new Promise((resolve) => setTimeout(resolve, delayMs)).then(work);
  const statement = (real: D1PreparedStatement): D1PreparedStatement =>
    new Proxy(real, {
      get(target, property) {
        if (property === "bind") return (...values: unknown[]) => statement(target.bind(...values));
        if (property === "first" || property === "all" || property === "run" || property === "raw") {
          return (...args: unknown[]) =>
            later(() => (target[property] as (...a: unknown[]) => Promise<unknown>)(...args));
        }
        return Reflect.get(target, property, target);
      },
    });
  const session = <T extends D1Database | D1DatabaseSession>(real: T): T =>
    new Proxy(real, {
      get(target, property) {
        if (property === "withSession")
          return (constraint: string) => session((target as D1Database).withSession(constraint));
        if (property === "prepare") return (sql: string) => statement(target.prepare(sql));
        if (property === "batch") return (statements: D1PreparedStatement[]) => later(() => target.batch(statements));
        const value = Reflect.get(target, property, target);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
  return session(db);
}

type Variant = "near" | "far" | "bans" | "bans-unrecorded" | "nocache" | "d1far" | "d1far-serial";

/** The app's bindings for each kind of bench route, made once per isolate so its config is parsed once. */
const variants = new WeakMap<Env, Record<Variant, Env>>();
function variantsOf(env: Env) {
  let made = variants.get(env);
  if (!made) {
    const near = { ...env, ACCOUNTS: limiterOf(env, 0) };
    // D1 50 ms away, every list read from it: with the read-ahead as deployed, and with none.
    const d1far = { ...near, ORDER_LIST_CACHE: "off", DB: delayedD1(env.DB, 50) };
    const bans = { ...near, BAN_THRESHOLD: "20" };
    made = {
      near,
      // Every limiter call 50 ms away, as from a client far from its key's object.
      far: { ...env, ACCOUNTS: limiterOf(env, 50) },
      // The service's own ban rule (bench/wrangler.jsonc sets a threshold no row reaches).
      bans,
      // The same, with no analytics binding: no data point built or written (the point's cost, side by side).
      "bans-unrecorded": { ...bans, REQUESTS: undefined as unknown as AnalyticsEngineDataset },
      nocache: { ...near, ORDER_LIST_CACHE: "off" },
      d1far,
      "d1far-serial": { ...d1far, ORDER_LIST_READ_AHEAD: "0" },
    };
    variants.set(env, made);
  }
  return made;
}

/**
 * A floor: what a refused or revalidated row would cost if the service
 * computed nothing. It writes the byte-identical response (the status, every
 * header with the same values, the same body; prepared once, from one
 * answer of the service to the same request), the same request log line and
 * the same analytics point, and does nothing else. A row's ratio to its floor
 * is what the service's own work costs: the key lookup, the lease check,
 * routing, the headers' values (docs/design/performance.md#floors-each-response-against-what-writes-the-same-bytes).
 */
interface Floor {
  status: number;
  headers: Headers;
  body: ArrayBuffer;
  line: string;
  point: AnalyticsEngineDataPoint | undefined;
}

const floors = new Map<string, Promise<Floor>>();

/**
 * The service's answer to `request`, and the log line and data point it
 * wrote: recorded once, as the floor replays them. Asked again until it is
 * the row's status (a keyless /64 is refused only once its minute's
 * admissions are spent), at most 100 times.
 */
async function recordFloor(request: Request, env: Env, ctx: ExecutionContext, expected: number): Promise<Floor> {
  for (let attempt = 1; ; attempt++) {
    const lines: string[] = [];
    let point: AnalyticsEngineDataPoint | undefined;
    const recording = {
      ...env,
      REQUESTS: {
        writeDataPoint: (written?: AnalyticsEngineDataPoint) => {
          point = written;
        },
      } as AnalyticsEngineDataset,
    };
    const log = console.log;
    console.log = (...args: unknown[]) => void lines.push(args.map(String).join(" "));
    let response: Response;
    try {
      response = await app.fetch(request.clone(), recording, ctx);
    } finally {
      console.log = log;
    }
    const body = await response.arrayBuffer();
    if (response.status === expected && lines.length === 1)
      return { status: response.status, headers: new Headers(response.headers), body, line: lines[0]!, point };
    if (attempt === 100)
      throw new Error(
        `the floor's sample answered ${response.status} with ${lines.length} log lines; expected ${expected} and one`,
      );
  }
}

/** Rows name their floor and its status here; the rest of the request is the row's own (bench/run.ts). */
const FLOOR_HEADER = "X-Bench-Floor";

async function serveFloor(
  request: Request,
  env: Env,
  made: Env,
  ctx: ExecutionContext,
  floor: string,
): Promise<Response> {
  const [name, status] = floor.split(":");
  let recorded = floors.get(name!);
  if (!recorded) {
    const sample = new Request(request, {
      headers: new Headers(
        [...request.headers].filter(([header]) => header.toLowerCase() !== FLOOR_HEADER.toLowerCase()),
      ),
    });
    recorded = recordFloor(sample, made, ctx, Number(status));
    floors.set(name!, recorded);
    recorded.catch(() => floors.delete(name!));
  }
  const { line, point, body, headers } = await recorded;
  console.log(line);
  if (point) env.REQUESTS.writeDataPoint(point);
  return new Response(body, { status: Number(status), headers });
}

/**
 * The rows that need bindings of their own name them in this header rather
 * than in the path: a rewritten URL would cost those rows a second Request
 * that the bare route and the app's own rows do not pay.
 */
const VARIANT_HEADER = "X-Bench-Variant";

/**
 * The request's path and query, read from the URL string as Hono's router
 * reads it: a URL object for every request (5-6 µs of workerd CPU in the
 * profile of the 304 row) would be charged to the app's rows and to none of
 * their floors, which this wrapper hands on before it looks at the path.
 */
const pathOf = (url: string) => url.slice(url.indexOf("/", url.indexOf("://") + 3));

export default {
  fetch(request, env, ctx) {
    const floor = request.headers.get(FLOOR_HEADER);
    if (floor !== null) {
      const name = request.headers.get(VARIANT_HEADER) as Variant | null;
      return serveFloor(request, env, variantsOf(env)[name ?? "near"], ctx, floor);
    }
    const variant = request.headers.get(VARIANT_HEADER);
    if (variant !== null) {
      const made = variantsOf(env);
      if (Object.hasOwn(made, variant)) return app.fetch(request, made[variant as Variant], ctx);
      if (variant === "no-replay") return withoutReplay.fetch(request, made.near, ctx);
      if (variant === "bans-no-replay") return withoutReplay.fetch(request, made.bans, ctx);
      const cut = /^breakdown-(\d)$/.exec(variant);
      if (cut && breakdown[Number(cut[1])]) return breakdown[Number(cut[1])]!.fetch(request, made.bans, ctx);
      return new Response(`No bench variant ${variant}.`, { status: 400 });
    }
    const path = pathOf(request.url);
    if (path.startsWith("/bench/query")) return bench.fetch(request, variantsOf(env).nocache, ctx);
    if (path.startsWith("/bench/")) return bench.fetch(request, env, ctx);
    return app.fetch(request, variantsOf(env).near, ctx);
  },
  scheduled: service.scheduled,
} satisfies ExportedHandler<Env>;
