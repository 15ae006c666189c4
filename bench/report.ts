/** The benchmark's arithmetic and tables, apart from the measuring so they can be tested. */

export interface LoadRow {
  name: string;
  expected: number;
  requestsPerSecond: number;
  p50: number;
  p99: number;
  total: number;
  /** Responses with another status, errors and timeouts: the row does not measure what it says if this is not 0. */
  unexpected: number;
}

export interface ScaleRow {
  name: string;
  orders: number;
  runs: number;
  medianMs: number;
  bytes: number;
  peakRssBytes: number;
}

export interface Target {
  name: string;
  met: boolean;
  detail: string;
}

const MB = 1024 * 1024;

/** One row from several rounds: the median round by throughput, with every round's unexpected responses. */
export function medianRow(rounds: LoadRow[]): LoadRow {
  const sorted = [...rounds].sort((a, b) => a.requestsPerSecond - b.requestsPerSecond);
  const median = sorted[Math.floor((sorted.length - 1) / 2)];
  if (!median) throw new Error("no rounds");
  return {
    ...median,
    total: rounds.reduce((sum, r) => sum + r.total, 0),
    unexpected: rounds.reduce((sum, r) => sum + r.unexpected, 0),
  };
}

/** Rows 0 and 1 of the load table are the baselines: the runtime's limit and the data. */
export function loadTable(rows: LoadRow[]): string {
  const [runtime, data] = rows;
  const lines = [
    "| Row | req/s | p50 ms | p99 ms | vs bare Hono | vs list query |",
    "|---|---:|---:|---:|---:|---:|",
  ];
  for (const row of rows) {
    lines.push(
      `| ${row.name} | ${Math.round(row.requestsPerSecond)} | ${row.p50} | ${row.p99} | ` +
        `${ratio(row.requestsPerSecond, runtime?.requestsPerSecond)} | ${ratio(row.requestsPerSecond, data?.requestsPerSecond)} |`,
    );
  }
  return lines.join("\n");
}

export function scaleTable(rows: ScaleRow[]): string {
  const lines = ["| Row | median ms | µs per order | bytes | workerd peak RSS MB |", "|---|---:|---:|---:|---:|"];
  for (const row of rows) {
    const perOrder = row.orders > 0 ? ((row.medianMs * 1000) / row.orders).toFixed(2) : "–";
    lines.push(`| ${row.name} | ${row.medianMs.toFixed(1)} | ${perOrder} | ${row.bytes} | ${(row.peakRssBytes / MB).toFixed(1)} |`);
  }
  return lines.join("\n");
}

/** The targets, read from one run's figures. */
export function evaluateTargets(load: LoadRow[], scale: ScaleRow[]): Target[] {
  const data = load[1];
  const list = load.find((row) => row.name.startsWith("authenticated list"));
  const full = (orders: number) => scale.find((row) => row.orders === orders);
  const revalidation = scale.find((row) => row.orders === 0);
  const perOrder = (row: ScaleRow | undefined) => (row ? row.medianMs / row.orders : NaN);
  const targets: Target[] = [];

  const throughput = list && data ? list.requestsPerSecond / data.requestsPerSecond : NaN;
  targets.push({
    name: "authenticated list ≥ 0.85× the data baseline's throughput",
    met: throughput >= 0.85,
    detail: `${throughput.toFixed(2)}×`,
  });

  const conditional = revalidation && full(10_000) ? revalidation.medianMs / full(10_000)!.medianMs : NaN;
  targets.push({
    name: "304 of 10,000 orders < 1/5 of the full 10,000 list's time",
    met: conditional < 0.2,
    detail: `${conditional.toFixed(3)}× (${revalidation?.medianMs.toFixed(1)} ms vs ${full(10_000)?.medianMs.toFixed(1)} ms)`,
  });

  const growth = perOrder(full(100_000)) / perOrder(full(10_000));
  targets.push({
    name: "time per order at 100,000 ≤ 1.5× that at 10,000",
    met: growth <= 1.5,
    detail: `${growth.toFixed(2)}×`,
  });

  const memory = (full(100_000)?.peakRssBytes ?? NaN) - (full(1_000)?.peakRssBytes ?? NaN);
  targets.push({
    name: "workerd peak memory grows < 64 MB from 1,000 to 100,000 orders",
    met: memory < 64 * MB,
    detail: `${(memory / MB).toFixed(1)} MB`,
  });
  return targets;
}

function ratio(value: number, baseline: number | undefined): string {
  return baseline ? `${(value / baseline).toFixed(2)}×` : "–";
}
