import { z } from "zod";
import { defineOperation } from "../framework/operations/define-operation";
import { ApiError } from "../framework/api-error";
import { readJsonBody } from "../framework/operations/read-json-body";
import { jsonBody } from "../framework/counted-body";
import { callDependency } from "../lib/dependency";
import { logLine } from "../lib/log";
import { releaseOrderWrites } from "../orders/order-writes-hold";
import { eventSequence, raiseEventSequence } from "./event-sequence";

const OPERATOR = { operator: true, tag: "Service", stability: "experimental", documented: false } as const;
const Sequence = z.object({ sequence: z.string().regex(/^(0|[1-9][0-9]*)$/) });
/** How far above the sequence a raise may go: far more ids than a restore can rewind, far fewer than int64 holds. */
const MAX_RAISE = 1_000_000_000_000n;

/** The sequence noted before the restore. */
const RaiseBody = z.object({ atLeast: z.string().regex(/^(0|[1-9][0-9]*)$/, "the sequence noted before the restore, as digits").max(19) });

/**
 * The operator API's order event sequence (docs/operations.md#restoring-d1):
 * read it before a D1 Time Travel restore, raise it back after, so no event
 * id is handed out twice.
 */
export const eventSequenceOperations = [
  defineOperation({
    ...OPERATOR,
    operationId: "getEventSequence",
    method: "get",
    path: "/order-events/sequence",
    summary: "The highest order event id handed out",
    description: "Note it before a D1 Time Travel restore.",
    responses: { 200: { description: "The sequence", body: Sequence } },
    errors: [],
    async handle(c) {
      return jsonBody(c, { sequence: await callDependency("D1", () => eventSequence(c.env.DB)) });
    },
  }),
  defineOperation({
    ...OPERATOR,
    operationId: "raiseEventSequence",
    method: "post",
    path: "/order-events/sequence",
    summary: "Raise the order event sequence after a restore",
    description: 'Body {"atLeast": "<digits>"}: the next event id is above it. Never lowers it. Lets order writes go on if a restore held them.',
    responses: { 200: { description: "The sequence now", body: Sequence } },
    errors: ["invalid_body", "unsupported_media_type", "body_too_large"],
    async handle(c) {
      const { atLeast } = await readJsonBody(c, RaiseBody);
      const current = await callDependency("D1", () => eventSequence(c.env.DB));
      // A typo of a digit too many would spend the int64 sequence, and every later order write would fail.
      if (BigInt(atLeast) > BigInt(current) + MAX_RAISE) {
        throw new ApiError("invalid_body", `atLeast is more than ${MAX_RAISE} above the sequence (${current}): check the value noted before the restore.`);
      }
      const sequence = await callDependency("D1", () => raiseEventSequence(c.env.DB, atLeast));
      // Order writes go on; the webhook dispatcher holds them again within its next pass if this is still below what it handed out.
      await callDependency("D1", () => releaseOrderWrites(c.env.DB));
      logLine("warn", c.get("requestId"), "the order event sequence was raised (after a D1 restore)", { atLeast, sequence, operator: c.get("operator") });
      return jsonBody(c, { sequence });
    },
  }),
];
