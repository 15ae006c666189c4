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
      const group = groups.get(id) ?? {
        caller: o.caller,
        window: field.name,
        end,
        quota: quotas.get(field.name),
        remaining: [],
      };
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
    if (beyond > 0)
      violations.push({
        check: "over-admission",
        detail: `${id}: ${beyond} admissions reported more left than the window could have had`,
      });
  }
  return violations;
}

/**
 * Every 5xx or missing answer, but a 503 answered while D1's schema was
 * being changed under the service (`excused`: the outage's renames, Unix ms,
 * a few seconds each): a dependency failing twice is answered 503 with
 * Retry-After, as documented, and that is what the renames make D1 do.
 */
export function serverErrors(
  observations: Observation[],
  excused: readonly { from: number; to: number }[] = [],
): Violation[] {
  return observations
    .filter((o) => o.status === 0 || o.status >= 500)
    .filter(
      (o) => !(o.status === 503 && excused.some((window) => o.receivedAt >= window.from && o.receivedAt <= window.to)),
    )
    .map((o) => ({
      check: "no 5xx",
      detail: `${o.method} ${o.path} by ${o.caller}: ${o.status === 0 ? "no response" : o.status}`,
    }));
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
      violations.push({
        check: "cancels",
        detail: `order ${id} was answered 204 but is ${outcome.pendingAfter.get(id)}`,
      });
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
      detail:
        `${cancelled} orders were cancelled but ${outcome.versionDelta} order writes happened: some changed ` +
        `more than once`,
    });
  }
  return violations;
}

/** An event of the feed, as the stress run read it back. */
export interface FeedEvent {
  id: string;
  type: string;
  orderId: string;
}

/** A change the run made, and the event type it must appear as. */
export interface ExpectedChange {
  type: string;
  orderId: string;
}

export interface EndpointReceipts {
  label: string;
  /** The types it asked for; undefined: all. */
  types?: readonly string[];
  /** Event ids it acknowledged, at least once each. */
  received: ReadonlySet<string>;
  /** Requests whose signature did not verify. */
  rejected: readonly string[];
}

/**
 * Every change is in the feed exactly once, and at every endpoint at least
 * once (docs/design/order-events.md#dispatch): `feed` is the feed read after
 * the run from the mark before it; `external` the changes made straight to D1,
 * in the order they were made (one writer: their events must keep it);
 * `cancelled` the orders the API's cancels changed.
 */
export function eventViolations(input: {
  feed: readonly FeedEvent[];
  external: readonly ExpectedChange[];
  cancelled: readonly string[];
  endpoints: readonly EndpointReceipts[];
}): Violation[] {
  const violations: Violation[] = [];
  const add = (detail: string) => violations.push({ check: "events", detail });
  const ids = new Set<string>();
  let previous = 0n;
  for (const event of input.feed) {
    if (ids.has(event.id)) add(`${event.id} appears twice in the feed`);
    ids.add(event.id);
    const seq = BigInt(event.id.slice("evt_".length));
    if (seq <= previous) add(`${event.id} comes after evt_${previous}: the feed is not ascending`);
    previous = seq;
  }

  const expected = new Map<string, number>();
  const key = (change: ExpectedChange) => `${change.type} of order ${change.orderId}`;
  for (const change of [
    ...input.external,
    ...input.cancelled.map((orderId) => ({ type: "order.cancelled", orderId })),
  ]) {
    expected.set(key(change), (expected.get(key(change)) ?? 0) + 1);
  }
  const found = new Map<string, number>();
  for (const event of input.feed) found.set(key(event), (found.get(key(event)) ?? 0) + 1);
  for (const [change, times] of expected) {
    const seen = found.get(change) ?? 0;
    if (seen !== times) add(`${change}: made ${times} time(s), in the feed ${seen} time(s)`);
  }
  for (const [change, times] of found)
    if (!expected.has(change)) add(`${change}: in the feed ${times} time(s), never made`);

  const externalOrders = new Set(input.external.map((change) => change.orderId));
  const externalInFeed = input.feed.filter((event) => externalOrders.has(event.orderId)).map(key);
  const firstOutOfOrder = input.external.findIndex((change, index) => externalInFeed[index] !== key(change));
  if (firstOutOfOrder >= 0 && violations.length === 0)
    add(
      `the external writes' events are out of order from the ${firstOutOfOrder + 1}th: ` +
        `${externalInFeed[firstOutOfOrder]} where ${key(input.external[firstOutOfOrder]!)} was made`,
    );

  for (const endpoint of input.endpoints) {
    const wanted = input.feed.filter((event) => !endpoint.types || endpoint.types.includes(event.type));
    const missing = wanted.filter((event) => !endpoint.received.has(event.id));
    if (missing.length > 0)
      add(`${endpoint.label}: ${missing.length} of ${wanted.length} events never delivered (first ${missing[0]!.id})`);
    const wantedIds = new Set(wanted.map((event) => event.id));
    const stray = [...endpoint.received].filter((id) => !wantedIds.has(id));
    if (stray.length > 0)
      add(
        `${endpoint.label}: ${stray.length} events delivered it did not ask for or that are not in the feed (first ` +
          `${stray[0]})`,
      );
    if (endpoint.rejected.length > 0)
      add(`${endpoint.label}: ${endpoint.rejected.length} deliveries failed verification (${endpoint.rejected[0]})`);
  }
  return violations;
}
