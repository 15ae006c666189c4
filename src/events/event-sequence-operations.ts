import { z } from "zod";
import { defineOperation } from "../framework/operations/define-operation";
import { ApiError } from "../framework/api-error";
import { readJsonBody } from "../framework/operations/read-json-body";
import { jsonBody } from "../framework/counted-body";
import { callDependency } from "../lib/call-dependency";
import { logLine } from "../lib/log";
import { orderWritesHold, releaseOrderWrites } from "../orders/order-writes-hold";
import { eventSequence, raiseEventSequence } from "./event-sequence";

const OPERATOR = { operator: true, tag: "Service", stability: "experimental", documented: false } as const;
const Sequence = z.object({ sequence: z.string().regex(/^(0|[1-9][0-9]*)$/) });
/** How far above the sequence a raise may go: far more ids than a restore can rewind, far fewer than int64 holds. */
const MAX_RAISE = 1_000_000_000_000n;

/** The sequence noted before the restore. */
const RaiseBody = z.object({
  atLeast: z
    .string()
    .regex(/^(0|[1-9][0-9]*)$/, "the sequence noted before the restore, as digits")
    .max(19),
});

/** The operator API's event sequence (docs/operations.md#restoring-d1): read before a restore, raised back after. */
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
    description:
      'Body {"atLeast": "<digits>"}: the next event id is above it. Never lowers it. ' +
      "Lets order writes go on if a restore held them, " +
      "only once the sequence is at or above every id handed out: a raise short of that is refused (409 " +
      "event_sequence_too_low, naming the sequence it needs).",
    responses: { 200: { description: "The sequence now", body: Sequence } },
    errors: ["invalid_body", "unsupported_media_type", "body_too_large", "event_sequence_too_low"],
    async handle(c) {
      const { atLeast } = await readJsonBody(c, RaiseBody);
      const db = c.env.DB;
      const current = await callDependency("D1", () => eventSequence(db));
      // A typo of a digit too many would spend the int64 sequence, and every later order write would fail.
      if (BigInt(atLeast) > BigInt(current) + MAX_RAISE) {
        throw new ApiError(
          "invalid_body",
          `atLeast is more than ${MAX_RAISE} above the sequence (${current}): check the value noted before the ` +
            `restore.`,
        );
      }
      // Writes in a gap below what was handed out would take ids that lanes hold already: their webhooks would be lost.
      const hold = await callDependency("D1", () => orderWritesHold(db).first<{ handedOut: string }>());
      const reached = BigInt(atLeast) > BigInt(current) ? BigInt(atLeast) : BigInt(current);
      if (hold && reached < BigInt(hold.handedOut)) {
        throw new ApiError(
          "event_sequence_too_low",
          `Order writes are held: event ids up to ${hold.handedOut} were handed out, and a sequence of ${reached} ` +
            `would hand some out again. Send "atLeast": "${hold.handedOut}" or more (the value noted before the ` +
            `restore).`,
        );
      }
      const sequence = await callDependency("D1", () => raiseEventSequence(db, atLeast));
      // Order writes go on only at or above what was handed out (a hold the dispatcher wrote meanwhile stays).
      await callDependency("D1", () => releaseOrderWrites(db, sequence));
      logLine("warn", c.get("requestId"), "the order event sequence was raised (after a D1 restore)", {
        atLeast,
        sequence,
        operator: c.get("operatorActor"),
      });
      return jsonBody(c, { sequence });
    },
  }),
];
