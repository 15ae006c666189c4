import { describeIdempotencyRows } from "../../support/authorization-matrix";

/**
 * The Idempotency-Key across every v2 operation (test/support/authorization-matrix.ts says how): the writes that take
 * one replay their first answer; the others never claim to.
 */
describeIdempotencyRows("an Idempotency-Key on every v2 operation", (row) => /^\w+ \/v2\//.test(row));
