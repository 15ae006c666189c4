/**
 * The release's health gate (docs/operations.md#promotion-by-health): at a
 * ramp step, the new and the previous version compared on the step's real
 * traffic, read from the request analytics (Workers Analytics Engine's SQL
 * API). The query, the reading of its answer and the judgement are plain
 * functions; the call out is src/lib/cloudflare-api.ts's, which the
 * operators' traffic view shares.
 */

export interface HealthThresholds {
  /** The new version's 5xx ratio may be at most this many times the old one's... */
  errorRatioFactor: number;
  /** ...or this ratio (0.005 is 0.5%), whichever is larger. */
  errorRatioFloor: number;
  /** Its p99 duration may be at most this many times the old one's... */
  p99Factor: number;
  /** ...plus this many milliseconds. */
  p99SlackMs: number;
  /** Fewer requests to the new version than this in the step's window: too little traffic to judge. */
  minRequests: number;
}

export const DEFAULT_THRESHOLDS: HealthThresholds = {
  errorRatioFactor: 2,
  errorRatioFloor: 0.005,
  p99Factor: 1.5,
  p99SlackMs: 50,
  minRequests: 100,
};

export interface VersionHealth {
  requests: number;
  errors: number;
  p99Ms: number;
}

export type HealthVerdict = {
  verdict: "healthy" | "too little traffic" | "unhealthy";
  line: string;
  reasons: string[];
};

const DATASET = /^[A-Za-z0-9_]+$/;

/**
 * Requests, 5xx and p99 duration per version over the last `windowSeconds`,
 * weighted by `_sample_interval` (the engine samples at high volume). The
 * columns are the request analytics point's (blob1 version, double1 status,
 * double2 duration).
 */
export function healthQuery(dataset: string, versions: readonly string[], windowSeconds: number): string {
  if (!DATASET.test(dataset)) throw new Error(`the analytics dataset "${dataset}" is not a plain name`);
  // Version ids come from wrangler; one that could leave its quotes is refused, never escaped.
  const bad = versions.find((version) => /['\\\n]/.test(version));
  if (bad !== undefined) throw new Error(`"${bad}" is not a Worker version id`);
  return [
    "SELECT blob1 AS version, SUM(_sample_interval) AS requests,",
    "  SUM(IF(double1 >= 500, _sample_interval, 0)) AS errors,",
    "  quantileExactWeighted(0.99)(double2, _sample_interval) AS p99_ms",
    `FROM ${dataset}`,
    `WHERE timestamp > NOW() - INTERVAL '${Math.max(1, Math.ceil(windowSeconds))}' SECOND ` +
      `AND blob1 IN (${versions.map((version) => `'${version}'`).join(", ")})`,
    "GROUP BY version",
    "FORMAT JSON",
  ].join("\n");
}

/**
 * The SQL API's answer (FORMAT JSON: numbers may come quoted) as health per version; a version without rows had no
 * requests.
 */
export function readHealthAnswer(answer: unknown, versions: readonly string[]): Map<string, VersionHealth> {
  const data = (answer as { data?: unknown } | null)?.data;
  if (!Array.isArray(data))
    throw new Error(`the SQL API answered without data: ${JSON.stringify(answer).slice(0, 200)}`);
  const health = new Map<string, VersionHealth>(
    versions.map((version) => [version, { requests: 0, errors: 0, p99Ms: 0 }]),
  );
  for (const row of data as Record<string, unknown>[]) {
    const [requests, errors, p99Ms] = [Number(row.requests), Number(row.errors), Number(row.p99_ms)];
    if (![requests, errors, p99Ms].every(Number.isFinite))
      throw new Error(`the SQL API answered a row that is not numbers: ${JSON.stringify(row)}`);
    if (health.has(String(row.version))) health.set(String(row.version), { requests, errors, p99Ms });
  }
  return health;
}

const percent = (ratio: number) => `${(ratio * 100).toFixed(2)}%`;
const describe = (name: string, health: VersionHealth) =>
  `${name} ${health.requests.toLocaleString("en")} requests, ` +
  `5xx ${health.requests ? percent(health.errors / health.requests) : "-"}, ` +
  `p99 ${health.requests ? `${Math.round(health.p99Ms)} ms` : "-"}`;

/**
 * Whether the new version may take more traffic: its 5xx ratio at most
 * max(factor x the old one's, the floor) and its p99 at most factor x the
 * old one's plus the slack, once it has served enough requests to judge.
 */
export function judgeHealth(
  fresh: VersionHealth,
  old: VersionHealth,
  thresholds: HealthThresholds = DEFAULT_THRESHOLDS,
): HealthVerdict {
  const line = `${describe("new", fresh)}; previous ${describe("", old).trimStart()}`;
  if (fresh.requests < thresholds.minRequests) {
    return {
      verdict: "too little traffic",
      line,
      reasons: [
        `the new version served ${fresh.requests} requests, fewer than the ${thresholds.minRequests} ` +
          `needed to judge: ` +
          `` +
          `` +
          `the smoke check decides`,
      ],
    };
  }
  const reasons: string[] = [];
  const oldRatio = old.requests > 0 ? old.errors / old.requests : 0;
  const maxRatio = Math.max(thresholds.errorRatioFactor * oldRatio, thresholds.errorRatioFloor);
  const ratio = fresh.errors / fresh.requests;
  if (ratio > maxRatio)
    reasons.push(
      `its 5xx ratio ${percent(ratio)} is above ${percent(maxRatio)} (max of ${thresholds.errorRatioFactor}x the ` +
        `previous ${percent(oldRatio)} and ${percent(thresholds.errorRatioFloor)})`,
    );
  if (old.requests > 0) {
    const maxP99 = thresholds.p99Factor * old.p99Ms + thresholds.p99SlackMs;
    if (fresh.p99Ms > maxP99)
      reasons.push(
        `its p99 ${Math.round(fresh.p99Ms)} ms is above ${Math.round(maxP99)} ms (${thresholds.p99Factor}x the ` +
          `previous ${Math.round(old.p99Ms)} ms + ${thresholds.p99SlackMs} ms)`,
      );
  }
  return { verdict: reasons.length > 0 ? "unhealthy" : "healthy", line, reasons };
}
