/**
 * `npm run stress`: many concurrent clients with several keys and plans
 * against the real local service over loopback HTTP, for a bounded number of
 * requests and time. Afterwards it checks, from the responses' own headers and
 * from D1, that nothing was over-admitted, nothing answered 5xx, and
 * concurrent cancels changed each order exactly once. It prints a summary and
 * exits 1 on any violation.
 */
import { parseArgs } from "node:util";
import type { Limits, Plan } from "../src/keys/api-key-record";
import { fetchLocal, startService, tempStateDir } from "./lib/local-service";
import { issueKey, openKeyStore } from "./lib/key-store";
import {
  admissionsByWindow,
  cancelViolations,
  isAdmitted,
  overAdmissions,
  serverErrors,
  type Observation,
  type Violation,
} from "./lib/stress-checks";
import { mustRunWrangler } from "./lib/wrangler";

const { values } = parseArgs({
  options: {
    requests: { type: "string", default: "20000" },
    clients: { type: "string", default: "32" },
    "max-seconds": { type: "string", default: "300" },
  },
});
const totalRequests = Number(values.requests);
const clients = Number(values.clients);
const maxSeconds = Number(values["max-seconds"]);

// Orders of the stress run's own: cancels target only these.
const PENDING = { from: 20_001, to: 20_400 };
const SHIPPED = { from: 20_401, to: 20_450 };

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
   SELECT i, 1, 1, CASE WHEN i > ${PENDING.to} THEN 'shipped' ELSE 'pending' END, 0, '2026-11-01T00:00:00Z', '2026-11-01T00:00:00Z' FROM n`,
);
const store = await openKeyStore("local", state.path);
const keyed = async (label: string, plan: Plan, limits?: Limits): Promise<Caller> => {
  const { key } = await issueKey(store, { plan, name: `stress ${label}`, limits });
  return { label, plan, headers: { Authorization: `Bearer ${key}` } };
};
const callers: Caller[] = [
  await keyed("free", "free"),
  await keyed("pro", "pro"),
  await keyed("business", "business"),
  await keyed("enterprise", "enterprise", { perMinute: 100_000, perDay: 1_000_000 }),
  await keyed("enterprise, tight", "enterprise", { perMinute: 40, perDay: 200 }),
  ...[1, 2, 3].map((n) => ({ label: `no key, 198.51.100.${n}`, plan: "none" as const, headers: { "CF-Connecting-IP": `198.51.100.${n}` } })),
];
await store.close();

const versionOf = () => Number(d1("SELECT version FROM orders_version WHERE singleton = 1")[0]!.results[0]!.version);
const service = await startService(state.path);
const observations: Observation[] = [];
let violations: Violation[] = [];
let timedOut = false;

try {
  const versionBefore = versionOf();
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
  try {
    await Promise.all(Array.from({ length: clients }, client));
  } finally {
    clearInterval(progress);
  }
  const seconds = (Date.now() - started) / 1000;

  const statusesOf = (range: { from: number; to: number }) =>
    new Map(
      d1(`SELECT CAST(id AS TEXT) AS id, status FROM orders WHERE id BETWEEN ${range.from} AND ${range.to}`)[0]!.results.map(
        (row) => [String(row.id), String(row.status)] as const,
      ),
    );
  const outcome = { pendingAfter: statusesOf(PENDING), shippedAfter: statusesOf(SHIPPED), versionDelta: versionOf() - versionBefore };

  violations = [...serverErrors(observations), ...overAdmissions(observations), ...cancelViolations(observations, outcome)];
  if (timedOut) violations.push({ check: "bounds", detail: `only ${observations.length} of ${totalRequests} requests within ${maxSeconds} s` });
  printSummary(seconds, outcome);
} finally {
  await service.stop();
  state.remove();
}
process.exit(violations.length === 0 ? 0 : 1);

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
    const response = await fetchLocal(`${service.baseUrl}${path}`, { method, headers: { ...caller.headers, ...extra } });
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
    return { caller: caller.label, method, path, status: 0, receivedAt: Date.now(), rateLimit: null, rateLimitPolicy: null };
  }
}

function printSummary(seconds: number, outcome: { pendingAfter: Map<string, string>; versionDelta: number }): void {
  const count = (items: Observation[], test: (o: Observation) => boolean) => items.filter(test).length;
  console.log(`\n## Stress run: ${observations.length} requests, ${clients} clients, ${seconds.toFixed(1)} s (${Math.round(observations.length / seconds)} req/s)\n`);
  const windows = admissionsByWindow(observations);
  // The fullest minute window of each caller, against its quota: the limit held where it was tested hardest.
  const fullestMinute = (caller: string) => {
    const mine = windows.filter((w) => w.caller === caller && w.window === "minute");
    const fullest = mine.sort((a, b) => b.remaining.length - a.remaining.length)[0];
    return fullest ? `${fullest.remaining.length} / ${fullest.quota} (${mine.length} windows)` : "–";
  };
  console.log("| Caller | Plan | Requests | Admitted | 429 | other 4xx | 5xx or no answer | most admitted in a minute / quota |");
  console.log("|---|---|---:|---:|---:|---:|---:|---:|");
  for (const caller of callers) {
    const mine = observations.filter((o) => o.caller === caller.label);
    console.log(
      `| ${caller.label} | ${caller.plan} | ${mine.length} | ${count(mine, isAdmitted)} | ${count(mine, (o) => o.status === 429)} | ` +
        `${count(mine, (o) => o.status >= 400 && o.status < 500 && o.status !== 429)} | ${count(mine, (o) => o.status === 0 || o.status >= 500)} | ` +
        `${fullestMinute(caller.label)} |`,
    );
  }
  const statuses = new Map<number, number>();
  for (const o of observations) statuses.set(o.status, (statuses.get(o.status) ?? 0) + 1);
  console.log(`\nStatuses: ${[...statuses].sort(([a], [b]) => a - b).map(([status, n]) => `${status}: ${n}`).join(", ")}`);
  const deletes = observations.filter((o) => o.method === "DELETE" && !o.path.endsWith("not-a-number"));
  const cancelled = [...outcome.pendingAfter.values()].filter((s) => s === "cancelled").length;
  console.log(
    `Cancels: ${deletes.length} DELETEs of ${PENDING.to - PENDING.from + 1} pending and ${SHIPPED.to - SHIPPED.from + 1} shipped orders; ` +
      `${cancelled} orders cancelled, ${outcome.versionDelta} order writes.`,
  );
  console.log(`\n## Checks\n`);
  const checks = ["no 5xx", "over-admission", "cancels", "bounds"];
  for (const check of checks) {
    const found = violations.filter((v) => v.check === check);
    console.log(`- ${found.length === 0 ? "PASS" : "FAIL"} ${check}${found.length ? `: ${found.length} violations` : ""}`);
    for (const v of found.slice(0, 10)) console.log(`  - ${v.detail}`);
  }
  console.log(violations.length === 0 ? "\nNo violations." : `\n${violations.length} violations.`);
}
