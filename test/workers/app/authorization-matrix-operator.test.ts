import { describeMatrixRows } from "../../support/authorization-matrix";

/** The authorization matrix (test/support/authorization-matrix.ts): its rows for the operator API. */
describeMatrixRows("the authorization matrix: the operator API", (row) => row.includes(" /admin"));
