/**
 * What `npm run stress` concludes from what it saw: pure functions of the
 * recorded responses (and of D1 afterwards), so they can be tested with
 * made-up observations that break each promise.
 */

export interface Observation {
  /** Who sent it: a key's label, or an address for callers without a key. */
  caller: string;
  method: string;
  path: string;
  /** 0 when the request failed in transport. */
  status: number;
  /** Client clock, Unix ms, when the response headers arrived. */
  receivedAt: number;
  /** The IETF `RateLimit` header: `"minute";r=<remaining>;t=<seconds>, "day";r=...;t=...`. */
  rateLimit: string | null;
  /** `RateLimit-Policy`: `"minute";q=<quota>;w=60, "day";q=<quota>;w=86400`. */
  rateLimitPolicy: string | null;
}

export interface Violation {
  check: string;
  detail: string;
}

interface WindowField {
  name: string;
  remaining: number;
  secondsLeft: number;
}

const WINDOW_SECONDS: Record<string, number> = { minute: 60, day: 86_400 };

export function parseRateLimit(header: string | null): WindowField[] {
  if (!header) return [];
  return header.split(",").flatMap((item) => {
    const match = /^\s*"(\w+)";r=(\d+);t=(\d+)\s*$/.exec(item);
    return match ? [{ name: match[1]!, remaining: Number(match[2]), secondsLeft: Number(match[3]) }] : [];
  });
}

export function parsePolicy(header: string | null): Map<string, number> {
  const quotas = new Map<string, number>();
  for (const item of (header ?? "").split(",")) {
    const match = /^\s*"(\w+)";q=(\d+);w=\d+\s*$/.exec(item);
    if (match) quotas.set(match[1]!, Number(match[2]));
  }
  return quotas;
}

/** A request the limiter let through: anything but a refusal, a server error or a transport failure. */
export const isAdmitted = (o: Observation) => o.status !== 0 && o.status !== 429 && o.status < 500;

export interface WindowAdmissions {
  caller: string;
  window: string;
  /** Unix seconds at which the window ends. */
  end: number;
  quota: number | undefined;
  /** The remaining count each admission in this window reported. */
  remaining: number[];
}

/**
 * Admissions grouped by caller and rate-limit window. Every admission reports
 * the remaining count of both windows; the window is identified from the
 * client's clock plus the seconds left, rounded to the window's UTC boundary.
 */
export function admissionsByWindow(observations: Observation[]): WindowAdmissions[] {
  const groups = new Map<string, WindowAdmissions>();
  for (const o of observations.filter(isAdmitted)) {
    const quotas = parsePolicy(o.rateLimitPolicy);
    for (const field of parseRateLimit(o.rateLimit)) {
      const size = WINDOW_SECONDS[field.name];
      if (size === undefined) continue;
      const end = Math.round((o.receivedAt / 1000 + field.secondsLeft) / size) * size;
      const id = `${o.caller} ${field.name} ${end}`;
      const group = groups.get(id) ?? { caller: o.caller, window: field.name, end, quota: quotas.get(field.name), remaining: [] };
      group.remaining.push(field.remaining);
      groups.set(id, group);
    }
  }
  return [...groups.values()];
}

/**
 * No caller was admitted beyond a window's quota: no more admissions than the
 * quota, and no admission that reported more left than the window could have
 * had (that would mean the counter raced). With leases `Remaining` is "at
 * most this many" (docs/design/rate-limits.md#leases), so counts may repeat; but if n
 * admissions were counted, the i-th smallest count any of them reported is at
 * most quota - n + i, whatever order they were decided in.
 */
export function overAdmissions(observations: Observation[]): Violation[] {
  const violations: Violation[] = [];
  for (const { caller, window, end, quota, remaining } of admissionsByWindow(observations)) {
    const id = `${caller} ${window} window ending ${new Date(end * 1000).toISOString()}`;
    if (quota !== undefined && remaining.length > quota) {
      violations.push({ check: "over-admission", detail: `${id}: ${remaining.length} admitted, quota ${quota}` });
    }
    if (quota === undefined) continue;
    const sorted = [...remaining].sort((a, b) => a - b);
    const beyond = sorted.filter((count, index) => count > quota - sorted.length + index).length;
    if (beyond > 0) violations.push({ check: "over-admission", detail: `${id}: ${beyond} admissions reported more left than the window could have had` });
  }
  return violations;
}

export function serverErrors(observations: Observation[]): Violation[] {
  return observations
    .filter((o) => o.status === 0 || o.status >= 500)
    .map((o) => ({ check: "no 5xx", detail: `${o.method} ${o.path} by ${o.caller}: ${o.status === 0 ? "no response" : o.status}` }));
}

export interface CancelOutcome {
  /** Orders that were pending before the run, and their status after it. */
  pendingAfter: Map<string, string>;
  /** Orders that were shipped before the run, and their status after it. */
  shippedAfter: Map<string, string>;
  /** orders_version after minus before: one per row written. */
  versionDelta: number;
}

/**
 * Concurrent cancels changed each order exactly once: every pending order a
 * 204 answered is cancelled, no shipped order changed, and the table's write
 * counter moved once per cancelled order and not more.
 */
export function cancelViolations(observations: Observation[], outcome: CancelOutcome): Violation[] {
  const violations: Violation[] = [];
  const idOf = (o: Observation) => o.path.split("/").at(-1) ?? "";
  for (const o of observations.filter((o) => o.method === "DELETE")) {
    const id = idOf(o);
    if (o.status === 204 && outcome.pendingAfter.has(id) && outcome.pendingAfter.get(id) !== "cancelled") {
      violations.push({ check: "cancels", detail: `order ${id} was answered 204 but is ${outcome.pendingAfter.get(id)}` });
    }
    if (outcome.shippedAfter.has(id) && o.status === 204) {
      violations.push({ check: "cancels", detail: `shipped order ${id} was answered 204` });
    }
  }
  for (const [id, status] of outcome.shippedAfter) {
    if (status !== "shipped") violations.push({ check: "cancels", detail: `shipped order ${id} is now ${status}` });
  }
  const cancelled = [...outcome.pendingAfter.values()].filter((status) => status === "cancelled").length;
  if (outcome.versionDelta !== cancelled) {
    violations.push({
      check: "cancels",
      detail: `${cancelled} orders were cancelled but ${outcome.versionDelta} order writes happened: some changed more than once`,
    });
  }
  return violations;
}
