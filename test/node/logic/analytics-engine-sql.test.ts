import { describe, expect, it } from "vitest";
import { engineRow, runEngineSql } from "../../support/analytics-engine-sql";

/**
 * The SQL API's stand-in held to the real engine (test/support/analytics-engine-sql.ts says from where): the
 * documented answer shape, the engine's types and how its JSON writes them, and what it refuses.
 */
const NOW = Date.UTC(2026, 10, 28, 12, 0, 0);
const point = (blob: string, double: number) => ({ indexes: ["budget_a"], blobs: [blob], doubles: [double] });
const rows = [
  engineRow(point("v1", 200), NOW - 90_000),
  engineRow(point("v1", 500), NOW - 30_000, 10),
  engineRow(point("v2", 204), NOW - 10_000),
];

describe("the SQL API stand-in", () => {
  it("answers as FORMAT JSON does: meta with names and types, data, rows", () => {
    const answer = runEngineSql(
      "SELECT blob1 AS version, SUM(_sample_interval) AS requests, count() AS stored, AVG(double1) AS mean " +
        "FROM requests GROUP BY version ORDER BY version FORMAT JSON",
      rows,
      NOW,
    );
    expect(answer).toEqual({
      meta: [
        { name: "version", type: "String" },
        { name: "requests", type: "UInt64" },
        { name: "stored", type: "UInt64" },
        { name: "mean", type: "Float64" },
      ],
      // 64-bit integers come quoted (a JSON number would lose them past 2^53); floats do not.
      data: [
        { version: "v1", requests: "11", stored: "2", mean: 350 },
        { version: "v2", requests: "1", stored: "1", mean: 204 },
      ],
      rows: 2,
    });
  });

  it("writes a DateTime as UTC text, and toUnixTimestamp as a plain number", () => {
    const answer = runEngineSql(
      "SELECT toStartOfInterval(timestamp, INTERVAL '1' MINUTE) AS minute, " +
        "toUnixTimestamp(MAX(timestamp)) AS last FROM requests GROUP BY minute ORDER BY minute",
      rows,
      NOW,
    );
    expect(answer.meta).toEqual([
      { name: "minute", type: "DateTime" },
      { name: "last", type: "UInt32" },
    ]);
    expect(answer.data).toEqual([
      { minute: "2026-11-28 11:58:00", last: (NOW - 90_000) / 1000 },
      { minute: "2026-11-28 11:59:00", last: (NOW - 10_000) / 1000 },
    ]);
  });

  it("takes quantileWeighted(level, value, weight) as the same function as quantileExactWeighted(level)(value, weight)", () => {
    const ask = (quantile: string) => runEngineSql(`SELECT ${quantile} AS p FROM requests`, rows, NOW).data;
    expect(ask("quantileWeighted(0.5, double1, _sample_interval)")).toEqual(
      ask("quantileExactWeighted(0.5)(double1, _sample_interval)"),
    );
    expect(ask("quantileExactWeighted(0.5)(double1, _sample_interval)")).toEqual([{ p: 500 }]);
  });

  it("lets an alias shadow the column of its name, as the engine does", () => {
    const answer = runEngineSql("SELECT blob1 AS index1 FROM requests WHERE index1 = 'v2'", rows, NOW);
    expect(answer.data).toEqual([{ index1: "v2" }]);
  });

  it("refuses what the engine refuses: a column neither aggregated nor grouped, an unknown column or function", () => {
    expect(() => runEngineSql("SELECT blob1, SUM(_sample_interval) AS n FROM requests", rows, NOW)).toThrow(
      "Column `blob1` is not under aggregate function and not in GROUP BY",
    );
    expect(() =>
      runEngineSql("SELECT index1, SUM(_sample_interval) AS n FROM requests GROUP BY blob1", rows, NOW),
    ).toThrow("not under aggregate function");
    expect(() => runEngineSql("SELECT budget FROM requests", rows, NOW)).toThrow("Unknown identifier: budget");
    expect(() => runEngineSql("SELECT median(double1) AS m FROM requests", rows, NOW)).toThrow(
      "Unknown function median",
    );
    expect(() => runEngineSql("SELECT CASE WHEN double1 > 1 THEN 1 END FROM requests", rows, NOW)).toThrow();
  });
});
