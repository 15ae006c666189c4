import { describeMatrixRows } from "../../support/authorization-matrix";

/** The authorization matrix (test/support/authorization-matrix.ts): its rows for webhook endpoints. */
describeMatrixRows("the authorization matrix: webhook endpoints", (row) => row.includes("/v2/webhook-endpoints"));
