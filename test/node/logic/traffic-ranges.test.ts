import { describe, expect, it } from "vitest";
import {
  readSeries,
  TRAFFIC_RANGES,
  trafficQueries,
  type TrafficRange,
} from "../../../src/operator/traffic/traffic-queries";
import { engineRow, runEngineSql } from "../../support/analytics-engine-sql";

/**
 * Every range of the operators' traffic view, not only the hour (docs/operations.md#traffic): its series asks for its
 * own bucket over its own span, and reads back into every bucket of it, a request counted in the bucket it fell in.
 */
const NOW = Date.UTC(2026, 10, 28, 12, 34, 56);
const ranges = Object.keys(TRAFFIC_RANGES) as TrafficRange[];

describe("the traffic view's ranges", () => {
  it.each(ranges)("%s: the series counts each request in its own bucket, every bucket of the span listed", (range) => {
    const { minutes, bucketMinutes } = TRAFFIC_RANGES[range];
    const sql = trafficQueries("requests", range).series;
    expect(sql).toContain(`INTERVAL '${bucketMinutes}' MINUTE`);
    expect(sql).toContain(`INTERVAL '${minutes}' MINUTE`);
    // One admitted request a minute ago, three limited ones (a sample of weight 3) half the span ago.
    const point = (outcome: string) => ({ indexes: ["budget_a"], blobs: ["", "", "", "", outcome, "pro"] });
    const halfway = NOW - (minutes / 2) * 60_000;
    const rows = [engineRow(point("admitted"), NOW - 60_000), engineRow(point("limited"), halfway, 3)];
    const series = readSeries(runEngineSql(sql, rows, NOW), range, NOW);
    expect(series).toHaveLength(minutes / bucketMinutes);
    const size = bucketMinutes * 60_000;
    const starts = series.map((bucket) => Date.parse(bucket.start));
    expect(starts.every((start, i) => start % size === 0 && (i === 0 || start - starts[i - 1]! === size))).toBe(true);
    const bucketOf = (at: number) => series.find((bucket) => Date.parse(bucket.start) === Math.floor(at / size) * size);
    expect(bucketOf(NOW - 60_000)).toMatchObject({ admitted: 1 });
    expect(bucketOf(halfway)).toMatchObject({ limited: 3 });
    expect(series.reduce((sum, bucket) => sum + bucket.admitted + bucket.limited, 0)).toBe(4);
  });
});
