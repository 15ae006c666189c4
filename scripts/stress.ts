/**
 * `npm run stress`: many concurrent clients with several keys and plans
 * against the real local service over loopback HTTP, for a bounded number of
 * requests and time, while another system writes orders straight to D1 and
 * two webhook endpoints receive their events. Afterwards it checks, from the
 * responses' own headers, from D1, the event feed and the receivers, that
 * nothing was over-admitted, nothing answered 5xx, concurrent cancels changed
 * each order exactly once, and every change is in the feed exactly once and
 * at each endpoint at least once, though the webhook tables were taken
 * away for 30 s in the middle of the traffic (every D1 call of the
 * dispatcher and of the endpoints' lanes fails). It prints a summary and
 * exits 1 on any violation.
 */
import { parseArgs } from "node:util";
import { SCOPES } from "../src/framework/operations/scopes";
import type { Plan } from "../src/account/plans";
import { fetchLocal, startService, tempStateDir } from "./lib/local-service";
import { issueLocalKeys, type KeyAsked } from "./lib/key-store";
import { startWebhookReceiver, type WebhookReceiver } from "./lib/webhook-receiver";
import { d1HttpApi } from "./lib/d1-http-api";
import { writeExternally, type ExternalWrites } from "./lib/stress-writes";
import {
  admissionsByWindow,
  cancelViolations,
  eventViolations,
  isAdmitted,
  type FeedEvent,
  overAdmissions,
  serverErrors,
  type Observation,
  type Violation,
} from "./lib/stress-checks";
import { mustRunWrangler } from "./lib/wrangler";
import { fanOutPhase } from "./lib/stress-fan-out";
import { operatorApi } from "./lib/operator-client";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "20000" },
    clients: { type: "string", default: "32" },
    "max-seconds": { type: "string", default: "300" },
    // When the webhook machinery's tables go away, after the traffic starts, and for how long (0: no outage).
    "outage-after": { type: "string", default: "10" },
    "outage-seconds": { type: "string", default: "30" },
  },
});
const outage = { afterMs: Number(values["outage-after"]) * 1000, forMs: Number(values["outage-seconds"]) * 1000 };
/** When the outage's renames changed D1's schema, and how long after one a request's answer may still show it. */
const schemaChanges: { from: number; to: number }[] = [];
const SCHEMA_CHANGE_GRACE_MS = 3_000;
/**
 * The tables every D1 call of the webhook machinery reads: renamed away, they are an outage for it alone (the API's own
 * reads go on).
 */
const OUTAGE_TABLES = ["webhook_endpoints", "webhook_dispatch"];
const totalRequests = Number(values.requests);
const clients = Number(values.clients);
const maxSeconds = Number(values["max-seconds"]);

// Orders of the stress run's own: cancels target only these.
const PENDING = { from: 20_001, to: 20_400 };
const SHIPPED = { from: 20_401, to: 20_450 };
// The other system's orders, written straight to D1.
const EXTERNAL_FROM = 30_001;
/** How long the endpoints may take, after the traffic, to have every event. */
const DELIVERY_PATIENCE_MS = 240_000;
/** The endpoint that wants only cancellations; the other wants every type. */
const CANCELS_ONLY = ["order.cancelled"];

interface Caller {
  label: string;
  plan: Plan | "none";
  headers: Record<string, string>;
}

const state = tempStateDir();
const persist = ["--persist-to", state.path];
const d1 = (sql: string) =>
  JSON.parse(mustRunWrangler(["d1", "execute", "store-orders", "--local", ...persist, "--json", "--command", sql])) as {
    results: Record<string, unknown>[];
  }[];

console.error("Preparing state: migrations, stress orders, keys…");
mustRunWrangler(["d1", "migrations", "apply", "store-orders", "--local", ...persist]);
d1(
  `INSERT INTO orders (id, pet_id, quantity, status, complete, created_at, updated_at)
   WITH RECURSIVE n(i) AS (SELECT ${PENDING.from} UNION ALL SELECT i + 1 FROM n WHERE i < ${SHIPPED.to})
   SELECT i, 1, 1, CASE WHEN i > ${PENDING.to} THEN 'shipped' ELSE 'pending' END, 0,
     '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z' FROM n`,
);
const big = { perMinute: 100_000, perDay: 1_000_000 };
const asks: KeyAsked[] = [
  { plan: "free", name: "stress free" },
  { plan: "pro", name: "stress pro" },
  { plan: "business", name: "stress business" },
  { plan: "enterprise", name: "stress enterprise", ...big },
  { plan: "enterprise", name: "stress enterprise, tight", perMinute: 40, perDay: 200 },
  // Makes the webhook endpoints and reads the feed; not one of the load's callers.
  { plan: "enterprise", name: "stress integrator", ...big, scopes: [...SCOPES] },
  // The fan-out phase's accounts, ten endpoints each.
  ...[1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map(
    (n): KeyAsked => ({
      plan: "enterprise",
      name: `stress fan-out ${n}`,
      ...big,
      scopes: ["orders:read", "webhooks:manage"],
    }),
  ),
];
const keys = await issueLocalKeys(state.path, asks);
const keyed = (index: number): Caller => ({
  label: asks[index]!.name.slice("stress ".length),
  plan: asks[index]!.plan,
  headers: { Authorization: `Bearer ${keys[index]}` },
});
const callers: Caller[] = [
  ...[0, 1, 2, 3, 4].map(keyed),
  ...[1, 2, 3].map((n) => ({
    label: `no key, 198.51.100.${n}`,
    plan: "none" as const,
    headers: { "CF-Connecting-IP": `198.51.100.${n}` },
  })),
];
const integrator = keyed(5);
const fanOutKeys = keys.slice(6);

const service = await startService(state.path);
// Read through the runtime that owns the database: a second process opening the SQLite files beside it meets
// SQLITE_BUSY.
const live = await d1HttpApi(service.baseUrl);
const versionOf = async () =>
  Number((await live("SELECT version FROM orders_version WHERE singleton = 1"))[0]!.version);
const observations: Observation[] = [];
let violations: Violation[] = [];
let timedOut = false;
const receivers = {
  all: await startWebhookReceiver({ refuseFirst: 0.2 }),
  cancels: await startWebhookReceiver({ refuseFirst: 0.2 }),
};

try {
  await createEndpoint(receivers.all);
  await createEndpoint(receivers.cancels, CANCELS_ONLY);
  // Everything before this mark was there before the run.
  const { after: feedMark } = await readFeed(undefined);
  const versionBefore = await versionOf();
  const started = Date.now();
  const deadline = started + maxSeconds * 1000;
  let issued = 0;

  console.error(`Stress: ${totalRequests} requests from ${clients} concurrent clients against ${service.baseUrl}…`);
  const client = async () => {
    while (issued < totalRequests) {
      if (Date.now() > deadline) {
        timedOut = true;
        return;
      }
      issued += 1;
      observations.push(await send(pick(callers)));
    }
  };
  // A line every 10 s, so a long run shows it is moving.
  const progress = setInterval(() => {
    const elapsed = Math.round((Date.now() - started) / 1000);
    console.error(`  ${observations.length} of ${totalRequests} requests answered after ${elapsed} s`);
  }, 10_000);
  let loadDone = false;
  let external: ExternalWrites;
  try {
    [external] = await Promise.all([
      writeExternally(live, { firstId: EXTERNAL_FROM, stop: () => loadDone, pauseMs: 20 }),
      Promise.all(Array.from({ length: clients }, client)).finally(() => (loadDone = true)),
      webhookOutage(),
    ]);
  } finally {
    clearInterval(progress);
  }
  const seconds = (Date.now() - started) / 1000;

  const statusesOf = async (range: { from: number; to: number }) =>
    new Map(
      (
        await live(`SELECT CAST(id AS TEXT) AS id, status FROM orders WHERE id BETWEEN ${range.from} AND ${range.to}`)
      ).map((row) => [String(row.id), String(row.status)] as const),
    );
  // The other system's rows moved the version too; the cancels' check counts the API's writes.
  const outcome = {
    pendingAfter: await statusesOf(PENDING),
    shippedAfter: await statusesOf(SHIPPED),
    versionDelta: (await versionOf()) - versionBefore - external.statements,
  };
  const feed = (await readFeed(feedMark)).events;
  const cancelled = [...outcome.pendingAfter].filter(([, status]) => status === "cancelled").map(([id]) => id);
  console.error(`Waiting for ${feed.length} events at the two endpoints…`);
  // Long enough for the lanes' backoff after the outage (10 s at most) and the retry schedule of the refused first
  // attempts.
  const waitedFrom = Date.now();
  const delivered = await untilDelivered(feed, DELIVERY_PATIENCE_MS);
  const waited = ((Date.now() - waitedFrom) / 1000).toFixed(1);

  violations = [
    ...serverErrors(observations, schemaChanges),
    ...overAdmissions(observations),
    ...cancelViolations(observations, outcome),
    ...eventViolations({
      feed,
      external: external.changes,
      cancelled,
      endpoints: [
        {
          label: "endpoint for every type",
          received: new Set(receivers.all.arrivals.keys()),
          rejected: receivers.all.rejected,
        },
        {
          label: "endpoint for order.cancelled",
          types: CANCELS_ONLY,
          received: new Set(receivers.cancels.arrivals.keys()),
          rejected: receivers.cancels.rejected,
        },
      ],
    }),
  ];
  if (timedOut)
    violations.push({
      check: "bounds",
      detail: `only ${observations.length} of ${totalRequests} requests within ${maxSeconds} s`,
    });
  console.error(
    "Fan-out: 100 endpoints over 10 accounts, one hanging and one slow, 500 changes by the other system in bursts…",
  );
  const operator = operatorApi(service.baseUrl, { stateDir: state.path });
  const fanOut = await fanOutPhase({
    baseUrl: service.baseUrl,
    keys: fanOutKeys,
    pipeline: async () => (await operator?.call("GET", "/pipeline")) ?? "(no operator token)",
    live,
    firstOrderId: 40_001,
    patienceMs: DELIVERY_PATIENCE_MS,
  });
  violations.push(...fanOut.violations);
  printSummary(seconds, outcome);
  console.log(
    `Events: ${feed.length} in the feed after the mark (${external.changes.length} changes by the other system in ` +
      `${external.statements} statements, ` +
      `${cancelled.length} cancels); every endpoint had them ` +
      `${delivered ? `all ${waited} s after the traffic` : `NOT all within ${DELIVERY_PATIENCE_MS / 1000} s`}; ` +
      `${receivers.all.refused + receivers.cancels.refused} first attempts refused on purpose and retried; ` +
      `${receivers.all.duplicates + receivers.cancels.duplicates} events acknowledged twice (at least ` +
      `once: a receipt ` +
      `` +
      `` +
      `D1 could not record is posted again).`,
  );
  const excused = observations.filter(
    (o) => o.status === 503 && schemaChanges.some((window) => o.receivedAt >= window.from && o.receivedAt <= window.to),
  ).length;
  if (outage.forMs > 0)
    console.log(
      `Outage: ${excused} requests answered 503 (with Retry-After) while its renames changed D1's schema under the ` +
        `service, as a failing dependency is answered.`,
    );
  for (const line of fanOut.lines) console.log(line);
  printChecks();
  // What the service said about it (its warnings and errors, counted by message), and where the undelivered events'
  // deliveries stand.
  if (violations.length > 0) {
    const said = new Map<string, number>();
    for (const line of service.output().split("\n")) {
      const message =
        /"message":"([^"]+)"/.exec(line)?.[1] ??
        (/✘|Error|wrangler:warn/.test(line)
          ? line
              .trim()
              .replace(/"[0-9a-f]{32}"/g, "…")
              .slice(0, 160)
          : undefined);
      if (message && /"level":"(warn|error)"|✘|Error|wrangler:warn/.test(line))
        said.set(message, (said.get(message) ?? 0) + 1);
    }
    console.log(
      `\nThe service's warnings and errors:\n${[...said].map(([message, n]) => `  ${n} × ${message}`).join("\n")}`,
    );
    for (const line of service
      .output()
      .split("\n")
      .filter((text) => /"status":5\d\d/.test(text))
      .slice(0, 5))
      console.log(`  ${line.slice(0, 500)}`);
    for (const line of service
      .output()
      .split("\n")
      .filter((text) => /hung|canceled/.test(text))
      .slice(0, 3))
      console.log(`  ${line.slice(0, 600)}`);
    console.log(
      `  the dispatcher's mark: ${JSON.stringify(await live("SELECT mark FROM webhook_dispatch"))}, the feed's head: ` +
        `${JSON.stringify(await live("SELECT max(seq) AS head FROM order_events"))}`,
    );
    await untilDelivered(feed, 180_000);
    console.log(
      `  after 180 s more: ${feed.filter((event) => !receivers.all.arrivals.has(event.id)).length} still missing at ` +
        `the endpoint for every type`,
    );
    console.log(
      `  the first missing: ${feed
        .filter((event) => !receivers.all.arrivals.has(event.id))
        .slice(0, 5)
        .map((event) => event.id)
        .join(", ")}`,
    );
  }
} finally {
  await service.stop();
  await Promise.all(Object.values(receivers).map((receiver) => receiver.close()));
  state.remove();
}
process.exit(violations.length === 0 ? 0 : 1);

/**
 * The webhook tables away for `outage.forMs`, from `outage.afterMs` into the traffic: deliveries must all arrive after
 * it.
 */
async function webhookOutage(): Promise<void> {
  if (outage.forMs <= 0) return;
  await new Promise((resolve) => setTimeout(resolve, outage.afterMs));
  console.error(`  Outage: the webhook tables unavailable for ${outage.forMs / 1000} s…`);
  await renamed((table) => `ALTER TABLE ${table} RENAME TO ${table}_outage`);
  try {
    await new Promise((resolve) => setTimeout(resolve, outage.forMs));
  } finally {
    await renamed((table) => `ALTER TABLE ${table}_outage RENAME TO ${table}`);
    console.error("  Outage over.");
  }
}

/** Runs the renames, noting when D1's schema changed under the service (a request then may fail twice and get 503). */
async function renamed(statement: (table: string) => string): Promise<void> {
  const from = Date.now();
  try {
    for (const table of OUTAGE_TABLES) await live(statement(table));
  } finally {
    schemaChanges.push({ from, to: Date.now() + SCHEMA_CHANGE_GRACE_MS });
  }
}

async function asIntegrator(path: string, init: RequestInit = {}): Promise<Response> {
  const response = await fetchLocal(`${service.baseUrl}${path}`, {
    ...init,
    headers: { ...integrator.headers, "Content-Type": "application/json", ...init.headers },
  });
  if (!response.ok) throw new Error(`${init.method ?? "GET"} ${path}: ${response.status} ${await response.text()}`);
  return response;
}

async function createEndpoint(receiver: WebhookReceiver, types?: string[]): Promise<void> {
  const response = await asIntegrator("/v2/webhook-endpoints", {
    method: "POST",
    body: JSON.stringify({ url: receiver.url, ...(types && { types }) }),
  });
  receiver.secret = ((await response.json()) as { secret: string }).secret;
}

/** The feed from `after` (the start when undefined) to its head, and the cursor after it. */
async function readFeed(after: string | undefined): Promise<{ events: FeedEvent[]; after: string }> {
  const events: FeedEvent[] = [];
  for (let cursor = after; ; ) {
    const page = (await (
      await asIntegrator(`/v2/store/order-events?limit=1000${cursor ? `&after=${encodeURIComponent(cursor)}` : ""}`)
    ).json()) as {
      data: { id: string; type: string; order: { id: number | string } }[];
      nextCursor: string;
    };
    events.push(...page.data.map((event) => ({ id: event.id, type: event.type, orderId: String(event.order.id) })));
    cursor = page.nextCursor;
    if (page.data.length < 1000) return { events, after: cursor };
  }
}

/** Until both endpoints acknowledged every event they want, or `patienceMs` passed. */
async function untilDelivered(feed: FeedEvent[], patienceMs: number): Promise<boolean> {
  const deadline = Date.now() + patienceMs;
  const complete = () =>
    feed.every(
      (event) =>
        receivers.all.arrivals.has(event.id) &&
        (!CANCELS_ONLY.includes(event.type) || receivers.cancels.arrivals.has(event.id)),
    );
  while (!complete()) {
    if (Date.now() > deadline) return false;
    await new Promise((resolve) => setTimeout(resolve, 250));
  }
  return true;
}

function pick<T>(items: readonly T[]): T {
  return items[Math.floor(Math.random() * items.length)]!;
}

function between(range: { from: number; to: number }): number {
  return range.from + Math.floor(Math.random() * (range.to - range.from + 1));
}

async function send(caller: Caller): Promise<Observation> {
  const roll = Math.random();
  const [method, path, extra]: [string, string, Record<string, string>] =
    roll < 0.45
      ? ["GET", "/v1/store/orders", {}]
      : roll < 0.55
        ? ["GET", "/v1/store/orders", { "If-None-Match": '"orders-0-0"' }]
        : roll < 0.9
          ? ["DELETE", `/v1/store/orders/${between(Math.random() < 0.9 ? PENDING : SHIPPED)}`, {}]
          : ["DELETE", "/v1/store/orders/not-a-number", {}];
  try {
    const response = await fetchLocal(`${service.baseUrl}${path}`, {
      method,
      headers: { ...caller.headers, ...extra },
    });
    const receivedAt = Date.now();
    await response.arrayBuffer();
    return {
      caller: caller.label,
      method,
      path,
      status: response.status,
      receivedAt,
      rateLimit: response.headers.get("RateLimit"),
      rateLimitPolicy: response.headers.get("RateLimit-Policy"),
    };
  } catch {
    return {
      caller: caller.label,
      method,
      path,
      status: 0,
      receivedAt: Date.now(),
      rateLimit: null,
      rateLimitPolicy: null,
    };
  }
}

function printSummary(seconds: number, outcome: { pendingAfter: Map<string, string>; versionDelta: number }): void {
  const count = (items: Observation[], test: (o: Observation) => boolean) => items.filter(test).length;
  console.log(
    `\n## Stress run: ${observations.length} requests, ${clients} clients, ${seconds.toFixed(1)} s ` +
      `(${Math.round(observations.length / seconds)} req/s)\n`,
  );
  const windows = admissionsByWindow(observations);
  // The fullest minute window of each caller, against its quota: the limit held where it was tested hardest.
  const fullestMinute = (caller: string) => {
    const mine = windows.filter((w) => w.caller === caller && w.window === "minute");
    const fullest = mine.sort((a, b) => b.remaining.length - a.remaining.length)[0];
    return fullest ? `${fullest.remaining.length} / ${fullest.quota} (${mine.length} windows)` : "–";
  };
  console.log(
    "| Caller | Plan | Requests | Admitted | 429 | other 4xx | 5xx or no answer | most admitted in a minute / quota |",
  );
  console.log("|---|---|---:|---:|---:|---:|---:|---:|");
  for (const caller of callers) {
    const mine = observations.filter((o) => o.caller === caller.label);
    console.log(
      `| ${caller.label} | ${caller.plan} | ${mine.length} | ${count(mine, isAdmitted)} | ` +
        `${count(mine, (o) => o.status === 429)} | ` +
        `${count(mine, (o) => o.status >= 400 && o.status < 500 && o.status !== 429)} | ` +
        `${count(mine, (o) => o.status === 0 || o.status >= 500)} | ` +
        `${fullestMinute(caller.label)} |`,
    );
  }
  const statuses = new Map<number, number>();
  for (const o of observations) statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1);
  console.log(
    `\nStatuses: ${[...statuses]
      .sort(([a], [b]) => a - b)
      .map(([status, n]) => `${status}: ${n}`)
      .join(", ")}`,
  );
  const deletes = observations.filter((o) => o.method === "DELETE" && !o.path.endsWith("not-a-number"));
  const cancelled = [...outcome.pendingAfter.values()].filter((s) => s === "cancelled").length;
  console.log(
    `Cancels: ${deletes.length} DELETEs of ${PENDING.to - PENDING.from + 1} pending and ` +
      `${SHIPPED.to - SHIPPED.from + 1} shipped orders; ` +
      `${cancelled} orders cancelled, ${outcome.versionDelta} order writes.`,
  );
}

function printChecks(): void {
  console.log(`\n## Checks\n`);
  const checks = ["no 5xx", "over-admission", "cancels", "events", "fan-out", "bounds"];
  for (const check of checks) {
    const found = violations.filter((v) => v.check === check);
    console.log(
      `- ${found.length === 0 ? "PASS" : "FAIL"} ${check}${found.length ? `: ${found.length} violations` : ""}`,
    );
    for (const v of found.slice(0, 10)) console.log(`  - ${v.detail}`);
  }
  console.log(violations.length === 0 ? "\nNo violations." : `\n${violations.length} violations.`);
}
