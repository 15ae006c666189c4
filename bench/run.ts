/**
 * `npm run bench`: the service and its baselines in one local workerd
 * (bench/worker.ts on Miniflare), loaded with autocannon, then the
 * list at 1,000 / 10,000 / 100,000 orders. Prints markdown tables and writes
 * bench/results.json. Figures are ratios on purpose: absolute numbers depend
 * on the machine, ratios to baselines measured in the same run do not.
 */
import autocannon from "autocannon";
import { readFileSync, writeFileSync } from "node:fs";
import { parseArgs } from "node:util";
import {
  DELIVERY,
  ROWS,
  SCALE,
  WALK_PAGE,
  fanOutDeliveryTable,
  type FanOutDeliveryRow,
  breakdownRowName,
  costTable,
  operationCosts,
  breakdownTable,
  deliveryTable,
  entryName,
  entryWorkerTable,
  evaluateFigures,
  evaluateTargets,
  floorName,
  lastRunSection,
  loadTable,
  medianRow,
  scaleTable,
  unexpectedWarnings,
  withLastRun,
  type BenchResults,
  type DeliveryRow,
  type FanOut,
  type LoadRow,
  type ScaleRow,
  type Target,
} from "./report";
import { measureDelivery } from "./delivery-latency";
import { monthOf, REFUSED_ROWS, STORE_MONTH } from "./operation-costs";
import { d1HttpApi } from "../scripts/lib/d1-http-api";
import { startWebhookReceiver, type WebhookReceiver } from "../scripts/lib/webhook-receiver";
import { createServer } from "node:http";
import { startBenchRuntime } from "./runtime";
import { sequentialClient } from "./sequential-client";

/** The run of record: results.json and the guide's last run. */
const OUT_OF_RECORD = "bench/results.json";
const README = "bench/README.md";

/** What a row sends, to `origin + path`. autocannon 8 takes `warmup`, which its published types (7.x) lack. */
type RowOptions = Omit<autocannon.Options, "url"> & {
  path: string /** The direct socket (nothing in front of the worker) unless given. */;
  origin?: string;
};

interface RowSpec {
  name: string;
  expected: number;
  /**
   * Limited by the minute: the row starts with a whole round left in the
   * minute, and the minute's admissions spent before it (sent until one is
   * refused), so it measures only refusals. Its warm-up alone did not spend
   * them on a loaded machine: after the 401 row, whose every new address
   * hands its lease back to its own object seconds later, the row's asks
   * were slow enough for 50 of the 60 admissions to land in the measurement
   * (the bench bans nobody by count).
   */
  withinOneMinute?: boolean;
  options(): Promise<RowOptions>;
}

const { values } = parseArgs({
  options: {
    duration: { type: "string", default: "5" },
    warmup: { type: "string", default: "1" },
    rounds: { type: "string", default: "3" },
    connections: { type: "string", default: "10" },
    out: { type: "string", default: OUT_OF_RECORD },
    // For quick comparisons while working on one path: only the load rows whose names contain one of these
    // (comma-separated), beside the two baselines; no scale rows, no fan-out, no targets. `--only webhook`: the
    // delivery rows alone;
    // `--only walks`: v1's list of 100,000 orders and v2's walks of them, with the walks' targets, `--rounds` times.
    only: { type: "string" },
  },
});
const duration = Number(values.duration);
const warmup = Number(values.warmup);
const connections = Number(values.connections);
const rounds = Number(values.rounds);

/** The webhook delivery rows: changes of each kind, and how many a second. */
const DELIVERY_CHANGES = 1_000;
/** The paced row: cancels through the API at a busy store's rate, counting how the dispatcher hands them on. */
const PACED_CANCELS = 200;
const PACED_RATE = 20;
/** The fan-out row's burst: new orders in one statement, each delivered to 100 endpoints. */
const FAN_OUT_EVENTS = 100;
const DELIVERY_RATE = 100;

/** Isolates of the bench worker: the load rows use the first; the fan-out measurement uses them all. */
const ISOLATES = 4;

console.error("Starting the bench worker on Miniflare…");
const runtime = await startBenchRuntime("bench/wrangler.jsonc", ISOLATES);
const origin = runtime.origin;
const client = sequentialClient(origin);

type Keys = Record<"roomy" | "far" | "enterprise" | "limited" | "banned" | "webhooks", string> & { fanOut: string[] };
const bearer = (key: string) => ({ Authorization: `Bearer ${key}` });
// Rows that need bindings of their own name them in a header (bench/worker.ts).
const variant = (name: string) => ({ "X-Bench-Variant": name });

/** The keys the rows drive, made by the bench worker, and the state the refusal rows need: a day spent, a ban. */
async function prepareKeys(): Promise<Keys> {
  const keys = (await (await fetch(`${origin}/bench/keys`, { method: "POST" })).json()) as Keys;

  await seed(100);
  // The limited key's one request a day, spent, so every later request of it is a 429 (until midnight UTC).
  await fetch(`${origin}/v1/store/orders`, { headers: { Authorization: `Bearer ${keys.limited}` } });
  // The banned key: one admitted, then refused until the service's ban rule (20 in a row) bans it for 15 minutes.
  for (let i = 0; i < 23; i++)
    await (
      await fetch(`${origin}/v1/store/orders`, { headers: { ...bearer(keys.banned), ...variant("bans") } })
    ).arrayBuffer();
  return keys;
}

/** The load rows, as data: each row's name, the status it expects, and what it sends. */
async function loadRows(keys: Keys): Promise<RowSpec[]> {
  const roomy = bearer(keys.roomy);
  // The per-request chain's layers, by name, as the worker has them (bench/worker.ts).
  const { layers } = (await (await fetch(`${origin}/bench/breakdown`)).json()) as { layers: string[] };
  const currentEtag = async () => (await fetch(`${origin}/v1/store/orders`, { headers: roomy })).headers.get("ETag")!;
  const revalidation: RowSpec = {
    name: ROWS.revalidation,
    expected: 304,
    options: async () => ({ path: "/v1/store/orders", headers: { ...roomy, "If-None-Match": await currentEtag() } }),
  };
  const unauthenticated: RowSpec = {
    name: ROWS.unauthenticated,
    expected: 401,
    options: async () => ({ path: "/v1/store/orders", requests: [{ setupRequest: fromRandomAddress }] }),
  };
  const keyless: RowSpec = {
    name: ROWS.keyless,
    expected: 429,
    withinOneMinute: true,
    options: async () => ({ path: "/v1/store/orders", requests: [{ setupRequest: fromOneNetwork }] }),
  };
  const limited: RowSpec = {
    name: ROWS.limited,
    expected: 429,
    options: async () => ({ path: "/v1/store/orders", headers: bearer(keys.limited) }),
  };
  const banned: RowSpec = {
    name: ROWS.banned,
    expected: 429,
    options: async () => ({ path: "/v1/store/orders", headers: { ...bearer(keys.banned), ...variant("bans") } }),
  };
  const bare: RowSpec = { name: ROWS.bare, expected: 200, options: async () => ({ path: "/bench/bare" }) };
  const data: RowSpec = {
    name: ROWS.data,
    expected: 200,
    options: async () => ({ path: "/bench/query/store/orders" }),
  };
  const dataLogged: RowSpec = {
    name: ROWS.dataLogged,
    expected: 200,
    options: async () => ({ path: "/bench/query-logged/store/orders" }),
  };
  const list: RowSpec = {
    name: ROWS.list,
    expected: 200,
    options: async () => ({ path: "/v1/store/orders", headers: roomy }),
  };
  const uncached: RowSpec = {
    name: ROWS.listUncached,
    expected: 200,
    options: async () => ({ path: "/v1/store/orders", headers: { ...roomy, ...variant("nocache") } }),
  };
  const peer: RowSpec = {
    name: ROWS.peer,
    expected: 200,
    options: async () => ({ path: "/bench/peer/store/orders", headers: roomy }),
  };
  const peerLogged: RowSpec = {
    name: ROWS.peerLogged,
    expected: 200,
    options: async () => ({ path: "/bench/peer-logged/store/orders", headers: roomy }),
  };
  const peerSameBytes: RowSpec = {
    name: ROWS.peerSameBytes,
    expected: 200,
    options: async () => ({ path: "/bench/peer-same-bytes/store/orders", headers: roomy }),
  };
  const refusals = [revalidation, unauthenticated, keyless, limited, banned];
  // Every row runs on the direct socket, as Cloudflare runs the Worker; these run through Miniflare's entry worker too,
  // for its share (no target).
  const throughEntry = [
    bare,
    dataLogged,
    list,
    peerSameBytes,
    uncached,
    ...refusals.flatMap((row) => [row, floorOf(row)]),
  ].map(viaEntryWorker);
  // Cancels change the list (and its ETag), so they come after every row that reads it.
  return [
    bare,
    data,
    dataLogged,
    // The list and the peers it is compared with side by side, as each refusal beside its floor: what drifts
    // over a run (the machine, the cache's store) then moves the compared rows alike.
    list,
    peer,
    peerLogged,
    peerSameBytes,
    uncached,
    {
      name: ROWS.v2Page,
      expected: 200,
      options: async () => ({ path: "/v2/store/orders?status=pending&limit=100", headers: roomy }),
    },
    {
      name: ROWS.farList,
      expected: 200,
      options: async () => ({ path: "/v1/store/orders", headers: { ...bearer(keys.far), ...variant("far") } }),
    },
    // Each refused or revalidated row, then its floor at once (a keyless /64 is still refused in the same minute).
    ...refusals.flatMap((row) => [row, floorOf(row)]),
    {
      name: ROWS.limitedNoReplay,
      expected: 429,
      options: async () => ({
        path: "/v1/store/orders",
        headers: { ...bearer(keys.limited), ...variant("no-replay") },
      }),
    },
    {
      name: ROWS.bannedNoReplay,
      expected: 429,
      options: async () => ({
        path: "/v1/store/orders",
        headers: { ...bearer(keys.banned), ...variant("bans-no-replay") },
      }),
    },
    {
      name: ROWS.bannedUnrecorded,
      expected: 429,
      options: async () => ({
        path: "/v1/store/orders",
        headers: { ...bearer(keys.banned), ...variant("bans-unrecorded") },
      }),
    },
    // The fixed cost's breakdown: the banned key through the chain cut after each layer.
    ...Array.from({ length: layers.length + 1 }, (_, cut) => ({
      name: breakdownRowName(layers, cut),
      expected: 429,
      options: async () => ({
        path: "/v1/store/orders",
        headers: { ...bearer(keys.banned), ...variant(`breakdown-${cut}`) },
      }),
    })),
    ...throughEntry,
    {
      name: "cancel (DELETE, one D1 batch)",
      expected: 204,
      options: async () => ({
        path: "/v1/store/orders/1",
        method: "DELETE",
        headers: roomy,
        requests: [
          { setupRequest: (req) => ({ ...req, path: `/v1/store/orders/${1 + Math.floor(Math.random() * 100)}` }) },
        ],
      }),
    },
  ];
}

/**
 * A row's floor (bench/worker.ts): the same request, answered with the
 * service's response to it replayed, its log line and data point written,
 * nothing computed.
 */
function floorOf(row: RowSpec): RowSpec {
  return {
    name: floorName(row.name),
    expected: row.expected,
    options: async () => {
      const options = await row.options();
      return { ...options, headers: { ...options.headers, "X-Bench-Floor": `${row.name}:${row.expected}` } };
    },
  };
}

/** The same row through Miniflare's entry worker, which Cloudflare does not run. */
function viaEntryWorker(row: RowSpec): RowSpec {
  return { ...row, name: entryName(row.name), options: async () => ({ ...(await row.options()), origin }) };
}

/** Rounds, interleaved, and the median of each row: a busy moment on the machine then hits every row alike. */
async function measureLoad(selected: readonly RowSpec[]): Promise<LoadRow[]> {
  const measured = selected.map(() => [] as LoadRow[]);
  for (let round = 1; round <= rounds; round++) {
    for (const [index, row] of selected.entries()) {
      console.error(`Load, round ${round}/${rounds}: ${row.name}…`);
      if (row.withinOneMinute) {
        await roomInTheMinute(warmup + duration + 1);
        await untilRefused(row);
      }
      measured[index]!.push(await drive(row.name, row.expected, await row.options()));
    }
  }
  return measured.map(medianRow);
}

/** Sends the row's own request, one at a time, until the service refuses it: what the minute admits is spent. */
async function untilRefused(row: RowSpec): Promise<void> {
  const { path, origin: base = runtime.directOrigin, headers = {}, requests } = await row.options();
  for (let attempt = 1; attempt <= 1_000; attempt++) {
    const setup = requests?.[0]?.setupRequest;
    const sent = typeof setup === "function" ? setup({ headers } as autocannon.Request, {}) : { headers };
    const response = await fetch(`${base}${path}`, { headers: sent.headers as Record<string, string> });
    await response.arrayBuffer();
    if (response.status === row.expected) return;
  }
  throw new Error(`${row.name}: never refused in 1,000 requests`);
}

/** Waits for the next minute when fewer than `seconds` are left in this one (the limiter's windows are UTC minutes). */
async function roomInTheMinute(seconds: number): Promise<void> {
  const left = 60_000 - (Date.now() % 60_000);
  if (left < seconds * 1000) await new Promise((resolve) => setTimeout(resolve, left + 50));
}

/** Hits of the cached list timed at each size. */
const CACHED_RUNS = 21;

/** `orders` orders (seed), on a workerd started afresh. */
async function onFreshWorkerd(orders: number, statuses?: "pending" | "mixed"): Promise<void> {
  await seed(orders, statuses);
  client.disconnect();
  await runtime.restart();
}

/** v1's whole list with the cache off: what a walk is judged by. */
const measureUncached = (orders: number, runs: number, roomy: Record<string, string>) =>
  measureList(`${orders.toLocaleString("en")} orders, ${SCALE.uncached}`, "/v1/store/orders", orders, runs, {
    ...roomy,
    ...variant("nocache"),
  });

/** The scale rows: sequential requests, each size on a fresh workerd. */
async function measureScale(roomy: Record<string, string>): Promise<ScaleRow[]> {
  const scale: ScaleRow[] = [];
  for (const [orders, runs] of [
    [1_000, 7],
    [10_000, 5],
    [100_000, 3],
  ] as const) {
    console.error(`Scale: ${orders} orders…`);
    // A fresh workerd for each size, so its peak memory is this size's (a miss, a fill and hits) and not a larger
    // list's.
    await onFreshWorkerd(orders);
    const size = orders.toLocaleString("en");
    const uncached = await measureUncached(orders, runs, roomy);
    // The first list of a version is a miss that fills the cache; the runs after it are hits.
    await measureList(`${size} orders, cache fill`, "/v1/store/orders", orders, 1, roomy);
    await new Promise((resolve) => setTimeout(resolve, 500));
    // A hit read from the local Cache API took 4 to 16 ms at 10,000 orders, and 15 to 120 ms at 100,000, from one
    // request to the next on the same code: the median of 21 hits, where a few runs' median was a coin toss (issue 51's
    // runs I and J).
    const cached = await measureList(`${size} orders, ${SCALE.cached}`, "/v1/store/orders", orders, CACHED_RUNS, roomy);
    scale.push(uncached, { ...cached, peakRssBytes: runtime.peakResidentBytes() });
    if (orders === 10_000) {
      const latest = await fetch(`${origin}/v1/store/orders`, { headers: roomy });
      await latest.arrayBuffer();
      const current = latest.headers.get("ETag")!;
      scale.push(
        await measureList(
          `${size} orders, ${SCALE.revalidation}`,
          "/v1/store/orders",
          0,
          21,
          { ...roomy, "If-None-Match": current },
          304,
        ),
      );
    }
    if (orders === 100_000) {
      for (const [name, bindings] of [
        [SCALE.farD1, "d1far"],
        [SCALE.farD1Serial, "d1far-serial"],
      ]) {
        scale.push(
          await measureList(`${size} orders, ${name}`, "/v1/store/orders", orders, runs, {
            ...roomy,
            ...variant(bindings!),
          }),
        );
      }
      scale.push(...(await measureWalks(orders, runs, roomy)));
    }
  }

  // v2's filtered page costs what a page reads, not what the table holds.
  for (const [orders, runs] of [
    [10_000, 21],
    [1_000_000, 21],
  ] as const) {
    console.error(`Scale: v2 pages among ${orders} orders…`);
    await onFreshWorkerd(orders, "mixed");
    await measureList(`warm-up`, "/v2/store/orders?status=pending&limit=100", 100, 3, roomy);
    // The seed leaves one order.created per order in the feed.
    for (const [row, path] of [
      [SCALE.v2Page, "/v2/store/orders?status=pending&limit=100"],
      [SCALE.v2RangePage, "/v2/store/orders?shipDateFrom=2026-01-01T00:00:00Z&limit=100"],
      [SCALE.feedPage, "/v2/store/order-events?limit=100"],
      [SCALE.feedTypesPage, "/v2/store/order-events?types=order.created,order.cancelled&limit=100"],
    ])
      scale.push(await measureList(`${orders.toLocaleString("en")} orders, ${row}`, path, 100, runs, roomy));
  }
  return scale;
}

try {
  const keys = await prepareKeys();
  const roomy = bearer(keys.roomy);
  const rows = await loadRows(keys);
  const only = values.only?.split(",");
  if (values.only === "walks") {
    // v1's uncached list of 100,000 orders and v2's walks of them, `--rounds` times: the walks' targets alone.
    await onFreshWorkerd(100_000);
    for (let round = 1; round <= rounds; round++) {
      const scale = [await measureUncached(100_000, 3, roomy), ...(await measureWalks(100_000, 3, roomy))];
      console.log(`\n## Round ${round}\n\n${scaleTable(scale)}\n`);
      printTargets(evaluateTargets([], scale).filter(({ name }) => name.includes("walking")));
    }
    process.exit(0);
  }
  if (values.only === "webhook") {
    console.log(deliveryTable(await measureDeliveries(keys.webhooks, roomy)));
    console.log(`\n${fanOutDeliveryTable(await measureFanOutDelivery(keys.fanOut))}`);
    process.exit(0);
  }
  const selected = only ? rows.filter((row, index) => index < 2 || only.some((part) => row.name.includes(part))) : rows;
  const load = await measureLoad(selected);
  if (only) {
    console.log(loadTable(load));
    console.log(`\n${entryWorkerTable(load)}\n\n${breakdownTable(load)}`);
    for (const warning of unexpectedWarnings(load)) console.log(`\n${warning}`);
    process.exit(load.some((row) => row.unexpected > 0) ? 1 : 0);
  }

  console.error(`Fan-out: one enterprise key from ${ISOLATES} isolates…`);
  const fanOut = await driveFromEveryIsolate(bearer(keys.enterprise));

  const delivery = await measureDeliveries(keys.webhooks, roomy);
  const fanOutDelivery = await measureFanOutDelivery(keys.fanOut);

  const scale = await measureScale(roomy);

  const targets = evaluateTargets(load, scale, fanOut, delivery, fanOutDelivery);
  const figures = evaluateFigures(load);
  console.log(
    `\n## Load (${connections} connections, ${warmup} s warm-up, ${duration} s per row, median of ${rounds} ` +
      `interleaved rounds)\n`,
  );
  console.log(loadTable(load));
  console.log(`\n${entryWorkerTable(load)}`);
  console.log(`\n## Where a refused request's time goes (the banned key through the chain cut after each layer)\n`);
  console.log(breakdownTable(load));
  console.log("\n## Scale (sequential requests; median time; workerd's peak resident memory)\n");
  console.log(scaleTable(scale));
  console.log(
    `\n## Webhook delivery (${DELIVERY_CHANGES} changes at ${DELIVERY_RATE} a second each; commit to ` +
      `first arrival at ` +
      `` +
      `` +
      `a receiver on this machine)\n`,
  );
  console.log(deliveryTable(delivery));
  console.log(`\n${fanOutDeliveryTable(fanOutDelivery)}`);
  console.log(
    `\n## Fan-out\n\nOne enterprise key (100,000 a minute) from ${fanOut.isolates} isolates at once: ` +
      `${fanOut.admitted} admitted, ${fanOut.objectCalls} calls to its limiter object.`,
  );
  const costs = operationCosts(load, fanOutDelivery);
  console.log(
    "\n## What a million of each costs (Workers Paid list prices, bench/operation-costs.ts; the calls as " +
      "test/workers/app/billed-calls.test.ts counts them, the CPU from this run)\n",
  );
  console.log(costTable(costs));
  const cpuMs = Object.fromEntries(
    costs.flatMap(({ operation, cpuMs }) => (cpuMs === null ? [] : [[operation, cpuMs]])),
  );
  const storeMonthDollars = Math.round(monthOf(STORE_MONTH, cpuMs).total);
  console.log(
    `\nA delivery refused once, then taken: ${REFUSED_ROWS.onceAlone} rows written alone, ${REFUSED_ROWS.once20} ` +
      `20 a run; its schedule spent: ${REFUSED_ROWS.spentAlone} alone, ${REFUSED_ROWS.spent20} 20 a run; an endpoint ` +
      `disabled with any number not yet sent: ${REFUSED_ROWS.disabled}.\n\nA store's month: $${storeMonthDollars}.`,
  );
  console.log("\n## Targets\n");
  printTargets(targets);
  console.log("\n## No target\n");
  for (const figure of figures) console.log(`- ${figure.name}: ${figure.detail}`);

  const warnings = unexpectedWarnings(load);
  for (const warning of warnings) console.log(`\n${warning}`);
  const results = {
    date: new Date().toISOString(),
    machine: machine(),
    settings: { connections, warmup, duration, rounds },
    load,
    scale,
    fanOut,
    delivery,
    fanOutDelivery,
    costs,
    refusedDeliveries: REFUSED_ROWS,
    storeMonthDollars,
    targets,
    figures,
  };
  writeFileSync(values.out, `${JSON.stringify(results, null, 2)}\n`);
  console.log(`\nJSON: ${values.out}`);
  // The guide shows the last full run of record, never a partial or scratch one.
  if (values.out === OUT_OF_RECORD) {
    writeFileSync(README, withLastRun(readFileSync(README, "utf8"), lastRunSection(results)));
    console.log(`Last run: ${README}`);
  }
  process.exitCode = warnings.length > 0 ? 1 : 0;
} catch (error) {
  console.error(error);
  process.exitCode = 1;
} finally {
  client.disconnect();
  await runtime.dispose();
}

/**
 * Webhook latency at 100 changes a second: cancels through the API (each
 * nudges the dispatcher), then updates written straight to D1 as another
 * system would (found by the dispatcher's poll), delivered by the endpoint's lane to a
 * receiver on this machine through one endpoint that wants every type.
 */
async function measureDeliveries(webhooksKey: string, roomy: Record<string, string>): Promise<DeliveryRow[]> {
  console.error(
    `Webhook delivery: ${DELIVERY_CHANGES} cancels, then ${DELIVERY_CHANGES} external updates, ${DELIVERY_RATE} a ` +
      `second…`,
  );
  // Orders 1..N for the cancels, N+1..2N for the external updates, then the paced cancels'; the endpoint comes after
  // their creations.
  await seed(2 * DELIVERY_CHANGES + PACED_CANCELS);
  const receiver = await startWebhookReceiver();
  const manage = { Authorization: `Bearer ${webhooksKey}`, "Content-Type": "application/json" };
  const created = await fetch(`${origin}/v2/webhook-endpoints`, {
    method: "POST",
    headers: manage,
    body: JSON.stringify({ url: receiver.url }),
  });
  if (created.status !== 201) throw new Error(`webhook endpoint: status ${created.status}: ${await created.text()}`);
  const endpoint = (await created.json()) as { id: string; secret: string };
  receiver.secret = endpoint.secret;
  const execute = await d1HttpApi(origin);
  const options = { changes: DELIVERY_CHANGES, perSecond: DELIVERY_RATE, patienceMs: 60_000 };
  try {
    const api = await measureDelivery(DELIVERY.api, receiver, {
      ...options,
      async write(index) {
        const response = await fetch(`${origin}/v1/store/orders/${index + 1}`, { method: "DELETE", headers: roomy });
        if (response.status !== 204) throw new Error(`cancel of order ${index + 1}: status ${response.status}`);
      },
      ours: (arrival) => arrival.type === "order.cancelled",
    });
    const handedOn = async () =>
      (await (await fetch(`${origin}/bench/hand-offs?endpoint=${endpoint.id}`, { method: "POST" })).json()) as {
        passes: number;
        handOffs: number[];
      };
    await handedOn();
    const pacedFrom = Date.now();
    const paced = await measureDelivery(DELIVERY.paced, receiver, {
      changes: PACED_CANCELS,
      perSecond: PACED_RATE,
      patienceMs: 60_000,
      async write(index) {
        const order = 2 * DELIVERY_CHANGES + index + 1;
        const response = await fetch(`${origin}/v1/store/orders/${order}`, { method: "DELETE", headers: roomy });
        if (response.status !== 204) throw new Error(`cancel of order ${order}: status ${response.status}`);
      },
      ours: (arrival) => arrival.type === "order.cancelled" && Date.parse(arrival.createdAt) >= pacedFrom,
    });
    const { passes, handOffs } = await handedOn();
    paced.handedOn = {
      passes,
      handOffs: handOffs.length,
      meanHandOff: handOffs.reduce((sum, size) => sum + size, 0) / handOffs.length,
      largestHandOff: Math.max(...handOffs),
    };
    const external = await measureDelivery(DELIVERY.external, receiver, {
      ...options,
      async write(index) {
        await execute("UPDATE orders SET quantity = quantity + 1 WHERE id = ?1", [
          String(DELIVERY_CHANGES + index + 1),
        ]);
      },
      ours: (arrival) => arrival.type === "order.updated",
    });
    // The same, with another endpoint of the account whose receiver takes every POST and answers none.
    const hanging = createServer(() => {});
    await new Promise<void>((resolve) => hanging.listen(0, "127.0.0.1", resolve));
    const stuck = await fetch(`${origin}/v2/webhook-endpoints`, {
      method: "POST",
      headers: manage,
      body: JSON.stringify({ url: `http://127.0.0.1:${(hanging.address() as { port: number }).port}/hooks` }),
    });
    const stuckId = ((await stuck.json()) as { id: string }).id;
    const besideFrom = Date.now();
    try {
      const besideHanging = await measureDelivery(DELIVERY.besideHanging, receiver, {
        ...options,
        async write(index) {
          await execute("UPDATE orders SET quantity = quantity + 1 WHERE id = ?1", [
            String(DELIVERY_CHANGES + index + 1),
          ]);
        },
        // Each order's second update: its first was the row above's.
        ours: (arrival) => arrival.type === "order.updated" && Date.parse(arrival.createdAt) >= besideFrom,
      });
      if (receiver.rejected.length > 0)
        throw new Error(`webhook signatures did not verify: ${receiver.rejected.slice(0, 3).join("; ")}`);
      return [api, paced, external, besideHanging];
    } finally {
      await fetch(`${origin}/v2/webhook-endpoints/${stuckId}`, { method: "DELETE", headers: manage });
      hanging.closeAllConnections();
      hanging.close();
    }
  } finally {
    await fetch(`${origin}/v2/webhook-endpoints/${endpoint.id}`, { method: "DELETE", headers: manage });
    await receiver.close();
  }
}

/**
 * Fan-out (docs/design/order-events.md#capacity): 100 endpoints over ten
 * accounts, each to a receiver of its own on this machine; one statement of
 * another system writes FAN_OUT_EVENTS new orders; then the time from that
 * commit to the last of their deliveries, beside the time a bare loop in
 * this process takes to POST the same requests to the same receivers, six
 * at a time each (a lane's concurrency).
 */
async function measureFanOutDelivery(keys: string[]): Promise<FanOutDeliveryRow> {
  console.error(`Webhook fan-out: ${FAN_OUT_EVENTS} changes to 100 endpoints, then the same POSTs from a bare loop…`);
  const execute = await d1HttpApi(origin);
  const made: { id: string; key: string; receiver: WebhookReceiver }[] = [];
  try {
    for (const key of keys) {
      for (let n = 0; n < 10; n++) {
        const receiver = await startWebhookReceiver();
        const response = await fetch(`${origin}/v2/webhook-endpoints`, {
          method: "POST",
          headers: { ...bearer(key), "Content-Type": "application/json" },
          body: JSON.stringify({ url: receiver.url, types: ["order.created"] }),
        });
        if (response.status !== 201)
          throw new Error(`fan-out endpoint: status ${response.status}: ${await response.text()}`);
        const endpoint = (await response.json()) as { id: string; secret: string };
        receiver.secret = endpoint.secret;
        made.push({ id: endpoint.id, key, receiver });
      }
    }
    const first = 5_000_001;
    const cpuBefore = runtime.cpuMicros();
    const started = Date.now();
    await execute(
      `INSERT INTO orders (id, pet_id, quantity, status, complete, created_at, updated_at)
       WITH RECURSIVE n(i) AS (SELECT ${first} UNION ALL SELECT i + 1 FROM n WHERE i < ${first + FAN_OUT_EVENTS - 1})
       SELECT i, 1, 1, 'pending', 0, '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z' FROM n`,
      [],
    );
    const arrived = () => made.reduce((sum, { receiver }) => sum + receiver.arrivals.size, 0);
    const deadline = Date.now() + 120_000;
    while (arrived() < made.length * FAN_OUT_EVENTS && Date.now() < deadline)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const lastArrival = Math.max(
      ...made.flatMap(({ receiver }) => [...receiver.arrivals.values()].map((arrival) => arrival.receivedAt)),
    );
    const seconds = (lastArrival - started) / 1000;
    const delivered = arrived();
    // Everything workerd spent from the burst's write to the last arrival: the passes, the lanes' runs, local D1's SQL.
    const workerdCpuMicrosPerDelivery = (runtime.cpuMicros() - cpuBefore) / delivered;

    // The same events handed to the same endpoints again: the pass's reads, its hand-offs to each lane, and lanes that
    // find nothing new to send. Measured until the mark is back where it was, less what the runtime spends idle (the
    // dispatcher's watch each second, this loop's reads of the mark) over as long.
    const markNow = async () =>
      String(
        (
          (await execute("SELECT CAST(mark AS TEXT) AS mark FROM webhook_dispatch WHERE id = 1", [])) as {
            mark: string;
          }[]
        )[0]?.mark,
      );
    const idleFrom = runtime.cpuMicros();
    const idleStarted = Date.now();
    while (Date.now() - idleStarted < 2_000) {
      await markNow();
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    const idleMicrosPerMs = (runtime.cpuMicros() - idleFrom) / (Date.now() - idleStarted);
    const cpuBeforePass = runtime.cpuMicros();
    const passStarted = Date.now();
    const rewound = await fetch(`${origin}/bench/dispatch-again?events=${FAN_OUT_EVENTS}`, { method: "POST" });
    if (rewound.status !== 200) throw new Error(`dispatch again: status ${rewound.status}: ${await rewound.text()}`);
    const { mark } = (await rewound.json()) as { mark: string };
    while ((await markNow()) !== mark && Date.now() - passStarted < 60_000)
      await new Promise((resolve) => setTimeout(resolve, 50));
    const passCpu = runtime.cpuMicros() - cpuBeforePass - idleMicrosPerMs * (Date.now() - passStarted);
    const workerdCpuMicrosPerHandOff = passCpu / (made.length * FAN_OUT_EVENTS);

    // The bare loop: the same number of POSTs, unsigned and unverified, six at a time per receiver.
    const bareStarted = Date.now();
    await Promise.all(
      made.map(async ({ receiver }) => {
        receiver.secret = undefined;
        let next = 0;
        await Promise.all(
          Array.from({ length: 6 }, async () => {
            while (next < FAN_OUT_EVENTS) {
              const index = next++;
              const body = JSON.stringify({
                id: `evt_bare_${index}`,
                type: "order.created",
                createdAt: new Date().toISOString(),
                order: { id: String(index) },
              });
              await (
                await fetch(receiver.url, {
                  method: "POST",
                  headers: { "Content-Type": "application/json", "webhook-id": `evt_bare_${index}` },
                  body,
                })
              ).arrayBuffer();
            }
          }),
        );
      }),
    );
    return {
      endpoints: made.length,
      events: FAN_OUT_EVENTS,
      delivered,
      seconds,
      bareSeconds: (Date.now() - bareStarted) / 1000,
      workerdCpuMicrosPerDelivery,
      workerdCpuMicrosPerHandOff,
    };
  } finally {
    for (const { id, key, receiver } of made) {
      await fetch(`${origin}/v2/webhook-endpoints/${id}`, { method: "DELETE", headers: bearer(key) });
      await receiver.close();
    }
  }
}

/**
 * The same key, from every isolate at once (10 requests in flight each, for
 * the load rows' duration): how many requests were admitted, and how many
 * calls the isolates made to the key's limiter object for them.
 */
async function driveFromEveryIsolate(headers: Record<string, string>): Promise<FanOut> {
  const callsNow = async () => {
    let sum = 0;
    for (let isolate = 0; isolate < ISOLATES; isolate++) {
      sum += ((await (await runtime.fetchOn(isolate, "/bench/calls")).json()) as { calls: number }).calls;
    }
    return sum;
  };
  const before = await callsNow();
  const until = Date.now() + duration * 1000;
  let admitted = 0;
  const worker = async (isolate: number) => {
    while (Date.now() < until) {
      const response = await runtime.fetchOn(isolate, "/v1/store/orders", { headers });
      await response.arrayBuffer();
      if (response.status === 200) admitted += 1;
      else throw new Error(`fan-out: status ${response.status}`);
    }
  };
  await Promise.all(Array.from({ length: ISOLATES * 10 }, (_, index) => worker(index % ISOLATES)));
  // Unspent leases come back when they expire, in calls of their own: wait for them so they are counted.
  await new Promise((resolve) => setTimeout(resolve, 6_000));
  return { isolates: ISOLATES, admitted, objectCalls: (await callsNow()) - before };
}

async function seed(orders: number, statuses: "pending" | "mixed" = "pending"): Promise<void> {
  const response = await fetch(`${origin}/bench/seed?orders=${orders}&statuses=${statuses}`, { method: "POST" });
  if (!response.ok) throw new Error(`seeding ${orders} orders failed: ${response.status}`);
}

function randomGroup(): string {
  return Math.floor(Math.random() * 0x10000).toString(16);
}

function fromRandomAddress(request: autocannon.Request): autocannon.Request {
  // Callers without a key are limited per address, IPv6 per /64; scanners come from many networks.
  return fromAddress(request, `2001:db8:${randomGroup()}:${randomGroup()}::1`);
}

function fromOneNetwork(request: autocannon.Request): autocannon.Request {
  // Many addresses of one /64: one budget, so after its first 60 requests each is refused (and then banned).
  return fromAddress(request, `2001:db8:bad:1:${randomGroup()}:${randomGroup()}::`);
}

function fromAddress(request: autocannon.Request, address: string): autocannon.Request {
  return { ...request, headers: { ...request.headers, "CF-Connecting-IP": address } };
}

async function drive(name: string, expected: number, options: RowOptions): Promise<LoadRow> {
  const { path, origin: base = runtime.directOrigin, ...rest } = options;
  const workerdBefore = runtime.cpuMicros();
  const benchBefore = process.cpuUsage();
  const result = await autocannon({
    url: `${base}${path}`,
    connections,
    duration,
    warmup: { connections, duration: warmup },
    ...rest,
  } as autocannon.Options);
  const bench = process.cpuUsage(benchBefore);
  const workerd = runtime.cpuMicros() - workerdBefore;
  const total = result.requests.total;
  // The CPU was spent on the warm-up's responses too (autocannon 8 reports its run beside the row's).
  const served = total + ((result as { warmup?: autocannon.Result }).warmup?.requests.total ?? 0);
  const matching = statusCounts(result)[expected] ?? 0;
  return {
    name,
    expected,
    requestsPerSecond: result.requests.average,
    p50: result.latency.p50,
    p99: result.latency.p99,
    total,
    unexpected: total - matching + result.errors + result.timeouts,
    unexpectedBy: unexpectedStatuses(result, expected),
    workerdCpuMicros: workerd / served,
    benchCpuMicros: (bench.user + bench.system) / served,
  };
}

/** Responses by status, as autocannon counted them. */
function statusCounts(result: autocannon.Result): Record<string, number> {
  const stats = (result.statusCodeStats ?? {}) as Record<string, { count: number }>;
  return Object.fromEntries(Object.entries(stats).map(([status, { count }]) => [status, count]));
}

/** The responses a row did not expect, by status, and its errors and timeouts. */
function unexpectedStatuses(result: autocannon.Result, expected: number): Record<string, number> {
  const by = Object.fromEntries(Object.entries(statusCounts(result)).filter(([status]) => Number(status) !== expected));
  if (result.errors > 0) by.errors = result.errors;
  if (result.timeouts > 0) by.timeouts = result.timeouts;
  return by;
}

function printTargets(targets: readonly Target[]): void {
  for (const target of targets) console.log(`- ${target.met ? "met" : "MISSED"}: ${target.name}: ${target.detail}`);
}

/** v2's walks of every order (the seed's), and what each walk's page pays besides its rows. */
async function measureWalks(orders: number, runs: number, roomy: Record<string, string>): Promise<ScaleRow[]> {
  const size = orders.toLocaleString("en");
  return [
    await measureWalk(`${size} orders, ${SCALE.v2Walk}`, "", orders, runs, roomy),
    await measureWalk(`${size} orders, ${SCALE.v2StatusWalk}`, "status=pending&", orders, runs, roomy),
    // The seed ships every order on one day, and all are pending: the range and the status cover the whole list.
    await measureWalk(
      `${size} orders, ${SCALE.v2RangeWalk}`,
      "status=pending&shipDateFrom=2026-01-01T00:00:00Z&",
      orders,
      runs,
      roomy,
    ),
    await measurePageOfOne(`${size} orders, ${SCALE.v2PageOfOne}`, "", roomy),
    await measurePageOfOne(`${size} orders, ${SCALE.v2StatusPageOfOne}`, "status=pending&", roomy),
  ];
}

/**
 * Sequential walks of v2's list with `filters` (a query prefix), page after page of 1,000 following nextCursor: the
 * median walk, each the sum of its pages' times to their last byte.
 */
async function measureWalk(
  name: string,
  filters: string,
  orders: number,
  runs: number,
  headers: Record<string, string>,
): Promise<ScaleRow> {
  const times: number[] = [];
  let bytes = 0;
  for (let run = 0; run < runs; run++) {
    let elapsed = 0;
    let seen = 0;
    bytes = 0;
    for (let cursor: string | null = ""; cursor !== null; ) {
      // Each page timed to its last byte, as measureList times v1's list: the bench's own parse of a page (to
      // count it and find the next cursor) is the load generator's work, kept out of the service's time.
      const started = performance.now();
      const { status, body } = await client.get(
        `/v2/store/orders?${filters}limit=${WALK_PAGE}${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
        headers,
      );
      elapsed += performance.now() - started;
      if (status !== 200) throw new Error(`${name}: status ${status}`);
      bytes += body.byteLength;
      const page = JSON.parse(body.toString()) as { data: unknown[]; nextCursor: string | null };
      seen += page.data.length;
      cursor = page.nextCursor;
    }
    if (seen !== orders) throw new Error(`${name}: walked ${seen} orders, not ${orders}`);
    times.push(elapsed);
  }
  times.sort((a, b) => a - b);
  return {
    name,
    orders,
    runs,
    medianMs: times[Math.floor(times.length / 2)]!,
    bytes,
    peakRssBytes: runtime.peakResidentBytes(),
  };
}

/**
 * A walk's page with one order, after the first page's cursor as every page but the first: its fixed cost,
 * sequentially, the median of 51.
 */
async function measurePageOfOne(name: string, filters: string, headers: Record<string, string>): Promise<ScaleRow> {
  const { body } = await client.get(`/v2/store/orders?${filters}limit=1`, headers);
  const { nextCursor } = JSON.parse(body.toString()) as { nextCursor: string };
  return measureList(
    name,
    `/v2/store/orders?${filters}limit=1&cursor=${encodeURIComponent(nextCursor)}`,
    1,
    51,
    headers,
  );
}

/** Sequential full reads of a list: median time to the last byte, bytes, and workerd's peak memory meanwhile. */
async function measureList(
  name: string,
  path: string,
  orders: number,
  runs: number,
  headers: Record<string, string>,
  status = 200,
): Promise<ScaleRow> {
  const times: number[] = [];
  let bytes = 0;
  for (let run = 0; run < runs; run++) {
    const started = performance.now();
    const response = await client.get(path, headers);
    times.push(performance.now() - started);
    const { body } = response;
    if (response.status !== status) {
      throw new Error(`${name}: status ${response.status}: ${body.toString()}\n${runtime.recentErrors().join("\n")}`);
    }
    bytes = body.byteLength;
    if (run === 0 && status === 200) {
      // v1's list is an array; v2's page is {data, nextCursor}.
      const parsed = JSON.parse(body.toString()) as unknown[] | { data: unknown[] };
      const listed = (Array.isArray(parsed) ? parsed : parsed.data).length;
      if (listed !== orders) throw new Error(`${name}: listed ${listed} orders, expected ${orders}`);
    }
  }
  times.sort((a, b) => a - b);
  return {
    name,
    orders,
    runs,
    medianMs: times[Math.floor(times.length / 2)]!,
    bytes,
    peakRssBytes: runtime.peakResidentBytes(),
  };
}

function machine(): BenchResults["machine"] {
  const cpus = readFileSync("/proc/cpuinfo", "utf8").match(/^model name\s*:\s*(.+)$/gm) ?? [];
  return { node: process.version, cpus: cpus.length, cpu: cpus[0]?.split(":")[1]?.trim() ?? "unknown" };
}
