import { describe, expect, it } from "vitest";
import { describeMatrixRows, MATRIX, operations, rowOf } from "../../support/authorization-matrix";

/**
 * Every operation's answer to every kind of caller (test/support/authorization-matrix.ts
 * holds the table): its rows for orders, events, usage, the documents and the pages here, the others in the files
 * beside it.
 */
describe("the authorization matrix", () => {
  it("has a row for every operation of the route table, and no other", () => {
    expect(Object.keys(MATRIX).sort()).toEqual(operations.map(rowOf).sort());
  });
});

describeMatrixRows(
  "the authorization matrix: orders, events, usage, the documents and the pages",
  (row) => !/\/v2\/(webhook-endpoints|keys|console)|\/admin/.test(row),
);
