import { describe, expect, it } from "vitest";
import {
  cancelViolations,
  eventViolations,
  overAdmissions,
  parseRateLimit,
  serverErrors,
  type Observation,
} from "../../scripts/lib/stress-checks";

const MINUTE_END = Date.UTC(2026, 10, 22, 12, 1, 0);
const POLICY = '"minute";q=3;w=60, "day";q=1000;w=86400';

/** An admitted GET 20 s before the minute ends, reporting `remaining` in the minute window. */
function admitted(remaining: number, overrides: Partial<Observation> = {}): Observation {
  const receivedAt = MINUTE_END - 20_000;
  const dayLeft = Math.ceil((Date.UTC(2026, 10, 23) - receivedAt) / 1000);
  return {
    caller: "pro",
    method: "GET",
    path: "/v1/store/orders",
    status: 200,
    receivedAt,
    rateLimit: `"minute";r=${remaining};t=20, "day";r=${900 + remaining};t=${dayLeft}`,
    rateLimitPolicy: POLICY,
    ...overrides,
  };
}

describe("the stress run's checks", () => {
  it("parse both windows of the RateLimit header", () => {
    expect(parseRateLimit('"minute";r=59;t=60, "day";r=999;t=86400')).toEqual([
      { name: "minute", remaining: 59, secondsLeft: 60 },
      { name: "day", remaining: 999, secondsLeft: 86400 },
    ]);
  });

  it("pass a window admitted up to its quota, and the next window on its own", () => {
    const next = { receivedAt: MINUTE_END + 1_000, rateLimit: '"minute";r=2;t=59, "day";r=897;t=39539' };
    expect(overAdmissions([admitted(2), admitted(1), admitted(0), admitted(2, next)])).toEqual([]);
  });

  it("catch more admissions in a window than its quota", () => {
    const four = [admitted(2), admitted(1), admitted(0), admitted(0, { rateLimit: '"minute";r=5;t=20' })];
    expect(overAdmissions(four).map((v) => v.detail)).toContain(
      "pro minute window ending 2026-11-22T12:01:00.000Z: 4 admitted, quota 3",
    );
  });

  it("catch two admissions that saw the same count (a race)", () => {
    const violations = overAdmissions([admitted(2), admitted(2)]);
    expect(violations.map((v) => v.detail)).toContain(
      "pro minute window ending 2026-11-22T12:01:00.000Z: 1 admissions reported more left than the window could have " +
        "had",
    );
  });

  it("accept a count reported twice when it stays within what the window could have had (a lease handed back)", () => {
    const tenPerMinute = { rateLimitPolicy: '"minute";q=10;w=60, "day";q=1000;w=86400' };
    const counts = [5, 4, 3, 4].map((remaining) => admitted(remaining, tenPerMinute));
    expect(overAdmissions(counts)).toEqual([]);
  });

  it("ignore refusals, and count a 5xx or a lost answer as a violation", () => {
    expect(overAdmissions([admitted(0), admitted(0, { status: 429 })])).toEqual([]);
    expect(serverErrors([admitted(1, { status: 503 }), admitted(0, { status: 0 }), admitted(2)])).toHaveLength(2);
    // A 503 answered while D1's schema was being changed under the service (the outage's renames) is what a failing
    // dependency gets.
    const during = { from: MINUTE_END - 30_000, to: MINUTE_END };
    expect(
      serverErrors([admitted(1, { status: 503 }), admitted(0, { status: 0 }), admitted(2, { status: 500 })], [during]),
    ).toHaveLength(2);
  });

  it("catch an order changed twice, and a shipped order cancelled", () => {
    const deletes = [admitted(1, { method: "DELETE", path: "/v1/store/orders/7", status: 204 })];
    const once = {
      pendingAfter: new Map([["7", "cancelled"]]),
      shippedAfter: new Map([["8", "shipped"]]),
      versionDelta: 1,
    };
    expect(cancelViolations(deletes, once)).toEqual([]);
    expect(cancelViolations(deletes, { ...once, versionDelta: 2 })[0]?.detail).toMatch(
      /1 orders were cancelled but 2 order writes/,
    );
    const shipped = [admitted(1, { method: "DELETE", path: "/v1/store/orders/8", status: 204 })];
    expect(
      cancelViolations(shipped, { ...once, shippedAfter: new Map([["8", "cancelled"]]), versionDelta: 2 }).map(
        (v) => v.detail,
      ),
    ).toEqual([
      "shipped order 8 was answered 204",
      "shipped order 8 is now cancelled",
      "1 orders were cancelled but 2 order writes happened: some changed more than once",
    ]);
  });

  describe("of order events", () => {
    const feed = [
      { id: "evt_10", type: "order.created", orderId: "30001" },
      { id: "evt_11", type: "order.cancelled", orderId: "20001" },
      { id: "evt_12", type: "order.updated", orderId: "30001" },
      { id: "evt_14", type: "order.deleted", orderId: "30001" },
    ];
    const external = [
      { type: "order.created", orderId: "30001" },
      { type: "order.updated", orderId: "30001" },
      { type: "order.deleted", orderId: "30001" },
    ];
    const everything = { label: "all", received: new Set(feed.map((event) => event.id)), rejected: [] };
    const cancels = { label: "cancels", types: ["order.cancelled"], received: new Set(["evt_11"]), rejected: [] };
    const run = { feed, external, cancelled: ["20001"], endpoints: [everything, cancels] };

    it("pass when every change is in the feed once and at each endpoint that asked for it", () => {
      expect(eventViolations(run)).toEqual([]);
    });

    it("find a change missing from the feed, one in it twice, and one nobody made", () => {
      const details = (input: Partial<typeof run>) => eventViolations({ ...run, ...input }).map((v) => v.detail);
      expect(details({ feed: feed.filter((event) => event.id !== "evt_11"), endpoints: [] })).toEqual([
        "order.cancelled of order 20001: made 1 time(s), in the feed 0 time(s)",
      ]);
      expect(
        details({ feed: [...feed, { id: "evt_15", type: "order.cancelled", orderId: "20001" }], endpoints: [] }),
      ).toEqual(["order.cancelled of order 20001: made 1 time(s), in the feed 2 time(s)"]);
      expect(details({ cancelled: [], endpoints: [] })).toEqual([
        "order.cancelled of order 20001: in the feed 1 time(s), never made",
      ]);
      expect(details({ feed: [...feed, feed[0]!], endpoints: [] })).toContain("evt_10 appears twice in the feed");
    });

    it("find external writes whose events are out of order, and a feed that is not ascending", () => {
      const swapped = [feed[0]!, feed[1]!, { ...feed[3]!, id: "evt_12" }, { ...feed[2]!, id: "evt_14" }];
      expect(eventViolations({ ...run, feed: swapped, endpoints: [] }).map((v) => v.detail)).toEqual([
        "the external writes' events are out of order from the 2th: order.deleted of order 30001 where order.updated " +
          "of order 30001 was made",
      ]);
      expect(
        eventViolations({ ...run, feed: [feed[1]!, feed[0]!, feed[2]!, feed[3]!], endpoints: [] }).map((v) => v.detail),
      ).toEqual(["evt_10 comes after evt_11: the feed is not ascending"]);
    });

    it("find an endpoint that missed an event, got one it did not ask for, or failed verification", () => {
      const details = eventViolations({
        ...run,
        endpoints: [
          { ...everything, received: new Set(["evt_10", "evt_11", "evt_12"]) },
          { ...cancels, received: new Set(["evt_11", "evt_12"]), rejected: ["evt_11: signature does not match"] },
        ],
      }).map((v) => v.detail);
      expect(details).toEqual([
        "all: 1 of 4 events never delivered (first evt_14)",
        "cancels: 1 events delivered it did not ask for or that are not in the feed (first evt_12)",
        "cancels: 1 deliveries failed verification (evt_11: signature does not match)",
      ]);
    });
  });
});
