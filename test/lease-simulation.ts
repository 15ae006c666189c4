import * as rules from "../src/limiter/lease-book";
import { DAY_SECONDS, MINUTE_SECONDS, decide, settle, windowStart, type BanRule, type LimiterState } from "../src/limiter/policy";
import type { Limits } from "../src/keys/schemas";

/**
 * A deterministic simulation of the limit rules (README, "Rate limits"): one
 * caller's object, many isolates spending leases, random arrivals, lease
 * expiry, isolate deaths, window boundaries and a limit changed mid-window.
 * It runs the same pure functions the object and the isolates run; calls to
 * the object take effect at once, which only makes grants earlier.
 */

/** mulberry32: small, fast, and the same sequence for the same seed everywhere. */
export function seededRandom(seed: number): () => number {
  let a = seed >>> 0;
  return () => {
    a = (a + 0x6d2b79f5) >>> 0;
    let t = a;
    t = Math.imul(t ^ (t >>> 15), t | 1);
    t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

export type Demand = "below" | "above";

export interface Scenario {
  seed: number;
  isolates: number;
  limits: Limits;
  /** The limits from `changeAt` on, when they change mid-run. */
  changed?: { at: number; limits: Limits };
  demand: Demand;
  /** Isolate deaths: each isolate dies at most once, at a random moment, and a fresh one takes its place. */
  deaths: boolean;
  ban: BanRule;
  start: number;
  durationMs: number;
}

export interface WindowLedger {
  admitted: number;
  refused: number;
  /** Admissions granted to isolates that died before spending them. */
  lostToDeaths: number;
  /** The highest limit in force during the window. */
  maxLimit: number;
  /** The window lies entirely within the run, and the limit did not change in it. */
  whole: boolean;
}

export interface SimulationResult {
  scenario: Scenario;
  minutes: Map<number, WindowLedger>;
  days: Map<number, WindowLedger>;
  objectCalls: number;
  admitted: number;
  /** Requests answered "limited" since the object last granted anything, when the object started the first ban. */
  limitedBeforeBan?: number;
  /** Requests still answered "limited" by isolates that had not heard of the ban yet. */
  limitedDuringBan: number;
}

/** Bans as configured: the efficiency properties run without them, since a caller above its limit is soon banned. */
export const BAN: BanRule = { threshold: 20, seconds: 900 };
export const NO_BAN: BanRule = { threshold: Number.MAX_SAFE_INTEGER, seconds: 1 };

/** A scenario drawn from the seed: 1 to 32 isolates, limits from tiny to large, often across a minute or day boundary. */
export function scenarioFor(seed: number, demand: Demand, options: { deaths?: boolean; limitChange?: boolean; ban?: BanRule; isolates?: number } = {}): Scenario {
  const { deaths = false, limitChange = false, ban = NO_BAN } = options;
  const random = seededRandom(seed);
  const isolates = options.isolates ?? 1 + Math.floor(random() * 32);
  const perMinute = [3, 10, 60, 300, 1000][Math.floor(random() * 5)]!;
  // The day window binds in some runs (a small day limit), never in the "above the minute limit" ones.
  const perDay = demand === "below" && random() < 0.3 ? perMinute * 3 : perMinute * 10_000;
  const dayBoundary = Date.UTC(2030, 0, 2);
  const start = random() < 0.5 ? dayBoundary - Math.floor(random() * 120_000) : dayBoundary + Math.floor(random() * 3_600_000);
  const durationMs = 240_000;
  const changed = limitChange
    ? { at: start + Math.floor(random() * durationMs), limits: { perMinute: Math.max(1, Math.round(perMinute * (random() < 0.5 ? 0.5 : 2))), perDay } }
    : undefined;
  return { seed, isolates, limits: { perMinute, perDay }, changed, demand, deaths, ban, start, durationMs };
}

interface Isolate {
  book: rules.LeaseBook;
  /** Mean milliseconds between this isolate's requests. */
  gapMs: number;
  next: number;
  diesAt: number;
}

export function simulate(scenario: Scenario): SimulationResult {
  const random = seededRandom(scenario.seed ^ 0x9e3779b9);
  const { start, durationMs } = scenario;
  const end = start + durationMs;
  const minutes = new Map<number, WindowLedger>();
  const days = new Map<number, WindowLedger>();
  let state: LimiterState | undefined;
  let objectCalls = 0;
  let admitted = 0;
  let batch = 0;
  let limitedSinceGrant = 0;
  let limitedDuringBan = 0;
  let limitedBeforeBan: number | undefined;
  const noteBan = () => {
    if (limitedBeforeBan === undefined && (state?.bannedUntil ?? 0) > 0) limitedBeforeBan = limitedSinceGrant;
  };
  const BAN = scenario.ban;

  const limitsAt = (now: number) => (scenario.changed && now >= scenario.changed.at ? scenario.changed.limits : scenario.limits);
  const ledger = (map: Map<number, WindowLedger>, windowStartSeconds: number, size: number, limit: (l: Limits) => number) => {
    let entry = map.get(windowStartSeconds);
    if (!entry) {
      const from = windowStartSeconds * 1000;
      const to = from + size * 1000;
      const changedInside = scenario.changed !== undefined && scenario.changed.at > from && scenario.changed.at < to;
      const limits = [limitsAt(from), limitsAt(to - 1)];
      entry = {
        admitted: 0,
        refused: 0,
        lostToDeaths: 0,
        maxLimit: Math.max(...limits.map(limit)),
        whole: from >= start && to <= end && !changedInside,
      };
      map.set(windowStartSeconds, entry);
    }
    return entry;
  };
  const windowsOf = (now: number) => [
    ledger(minutes, windowStart(now / 1000, MINUTE_SECONDS), MINUTE_SECONDS, (l) => l.perMinute),
    ledger(days, windowStart(now / 1000, DAY_SECONDS), DAY_SECONDS, (l) => l.perDay),
  ];

  // Demand "below": half the minute limit in total, evenly spaced, the isolates taking turns; "above": twice it, at random.
  const perMinute = Math.min(scenario.limits.perMinute, scenario.changed?.limits.perMinute ?? Infinity);
  const total = scenario.demand === "below" ? perMinute * 0.5 : Math.max(scenario.limits.perMinute, scenario.changed?.limits.perMinute ?? 0) * 2;
  const isolates: Isolate[] = Array.from({ length: scenario.isolates }, (_, index) => {
    const gapMs = (60_000 * scenario.isolates) / total;
    return {
      book: rules.newLeaseBook(),
      gapMs,
      next: start + (scenario.demand === "below" ? (index * gapMs) / scenario.isolates : random() * gapMs),
      diesAt: scenario.deaths && random() < 0.5 ? start + random() * durationMs : Infinity,
    };
  });
  const gap = (isolate: Isolate) =>
    scenario.demand === "below" ? isolate.gapMs : -Math.log(1 - random()) * isolate.gapMs;

  const settleBook = (book: rules.LeaseBook, now: number, unspent: ReturnType<typeof rules.takeExpired>) => {
    const refusals = rules.takeRefusals(book, `batch-${batch++}`);
    objectCalls += 1;
    state = settle(state, unspent, refusals, BAN, now);
    noteBan();
    rules.absorbSettled(book, { refusedInARow: state.refusedInARow, banEnds: state.bannedUntil }, refusals?.count ?? 0, now);
  };
  const ask = (book: rules.LeaseBook, now: number, speculative: boolean) => {
    const refusals = speculative ? undefined : rules.takeRefusals(book, `batch-${batch++}`);
    objectCalls += 1;
    const settled = refusals ? settle(state, [], refusals, BAN, now) : state;
    const result = decide(settled, limitsAt(now), BAN, now, rules.leaseWant(book, 0, now), speculative);
    state = result.state;
    if (result.verdict.granted > 0) limitedSinceGrant = 0;
    noteBan();
    return rules.absorbAnswer(book, result.verdict, now, !speculative, refusals?.count ?? 0);
  };

  for (;;) {
    const isolate = isolates.reduce((soonest, candidate) => (candidate.next < soonest.next ? candidate : soonest));
    const now = Math.floor(isolate.next);
    if (now >= end) break;
    isolate.next += gap(isolate);

    // Each lease's timer hands back what it left unspent when it expires (here, at the next event).
    for (const other of isolates) {
      const unspent = rules.takeExpired(other.book, now);
      if (unspent.length > 0) settleBook(other.book, now, unspent);
    }
    if (now >= isolate.diesAt) {
      // It dies with whatever it holds: granted and counted, never spent.
      for (const lease of isolate.book.leases) {
        if (lease.expiresAt <= now || lease.count === 0) continue;
        minutes.get(lease.minuteStart)!.lostToDeaths += lease.count;
        days.get(lease.dayStart)!.lostToDeaths += lease.count;
      }
      isolate.book = rules.newLeaseBook();
      isolate.diesAt = Infinity;
    }

    const { book } = isolate;
    rules.noteArrival(book, now);
    let verdict = rules.decideLocally(book, BAN, now);
    if (verdict?.outcome === "admitted" && rules.needsRenewal(book, now)) ask(book, now, true);
    if (verdict?.outcome === "limited" && book.pending.count >= rules.REFUSAL_BATCH) settleBook(book, now, []);
    verdict ??= ask(book, now, false)!;

    const [minute, day] = windowsOf(now);
    if (verdict.outcome === "admitted") {
      admitted += 1;
      minute!.admitted += 1;
      day!.admitted += 1;
    } else {
      minute!.refused += 1;
      day!.refused += 1;
      if (verdict.outcome === "limited" && limitedBeforeBan !== undefined) limitedDuringBan += 1;
      else if (verdict.outcome === "limited") limitedSinceGrant += 1;
    }
  }
  return { scenario, minutes, days, objectCalls, admitted, limitedBeforeBan, limitedDuringBan };
}
