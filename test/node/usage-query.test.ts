import { describe, expect, it } from "vitest";
import { USAGE_PARAMETERS, readUsageQuery } from "../../src/usage/usage-query";

/** The usage history's range (docs/api.md#usage), read at a fixed instant: 2030-03-10T12:00:30Z. */
const now = Date.UTC(2030, 2, 10, 12, 0, 30);
const read = (query: string) => readUsageQuery(new URLSearchParams(query), now);
const seconds = (iso: string) => Date.parse(iso) / 1000;

describe("the usage range", () => {
  it("starts no earlier than the oldest bucket still wholly kept: the one at the keeping time's edge is being pruned", () => {
    // Minutes are kept 48 hours: the minute holding now - 48 h is the prune's; the next one is the oldest answered.
    expect(() => read("granularity=minute&from=2030-03-08T12:00:00Z&to=2030-03-08T12:10:00Z")).toThrow(
      /from must be 2030-03-08T12:01:00.000Z or later/,
    );
    expect(read("granularity=minute&from=2030-03-08T12:01:00Z&to=2030-03-08T12:10:00Z").from).toBe(
      seconds("2030-03-08T12:01:00Z"),
    );
    expect(() => read("granularity=hour&from=2030-03-08T12:00:00Z&to=2030-03-08T14:00:00Z")).toThrow(
      /from must be 2030-03-08T13:00:00.000Z or later/,
    );
    expect(() => read("granularity=day&from=2029-02-03T00:00:00Z&to=2029-02-05T00:00:00Z")).toThrow(
      /from must be 2029-02-04T00:00:00.000Z or later/,
    );
  });

  it("ends with the bucket holding to, or the one before when to starts a bucket, as its description says", () => {
    expect(read("granularity=hour&from=2030-03-10T08:00:00Z&to=2030-03-10T10:30:00Z").to).toBe(
      seconds("2030-03-10T11:00:00Z"),
    );
    expect(read("granularity=hour&from=2030-03-10T08:00:00Z&to=2030-03-10T10:00:00Z").to).toBe(
      seconds("2030-03-10T10:00:00Z"),
    );
    expect(USAGE_PARAMETERS.to).toContain(
      "the last bucket is the one holding it, or the one before when it is a bucket's start",
    );
  });
});
