import { describeMatrixRows } from "../../support/authorization-matrix";

/**
 * The authorization matrix (test/support/authorization-matrix.ts): its rows for an account's own keys and console
 * sessions.
 */
describeMatrixRows("the authorization matrix: a budget's own keys and console sessions", (row) =>
  /\/v2\/(keys|console)/.test(row),
);
