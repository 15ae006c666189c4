import { z } from "zod";
import { defineOperation } from "../framework/operations/define-operation";
import { jsonBody } from "../framework/counted-body";
import { callDependency } from "../lib/call-dependency";
import { BUDGET_WARNING_SHARE, eventStorage } from "../events/prune-order-events";
import { readDispatchMark } from "../webhook-delivery/dispatch-mark";
import { countLanesBehind } from "../webhook-delivery/endpoint-table";
import { orderWritesHold } from "../orders/order-writes-hold";
import { workerVersionOf } from "../framework/documents/describe-service";

const Health = z.object({
  orderEvents: z.object({
    head: z.number().int().describe("The newest event's sequence"),
    prunedThrough: z.number().int().describe("Every event up to here is pruned: the feed answers 410 below it"),
    rows: z.number().int().describe("Events kept, at most"),
    bytes: z.number().int().describe("What they cost the orders database, by the measured bytes per event"),
    budgetBytes: z.number().int().describe("ORDER_EVENTS_BUDGET_MB: the prune keeps them under it, oldest first"),
    share: z.number().describe("bytes / budgetBytes"),
  }),
  dispatcher: z.object({
    mark: z.number().int().describe("The last event every lane that wanted it was handed"),
    lag: z.number().int().describe("Events written after the mark: 0 when the dispatcher is caught up"),
    lanesBehind: z
      .number()
      .int()
      .describe("Enabled endpoints whose lanes could not take their events: each catches up alone"),
  }),
  orderWrites: z.object({
    heldSince: z
      .string()
      .nullable()
      .describe(
        "Since when order writes are refused: the event sequence is below what was handed out (a D1 restore); null " +
          "when they are not",
      ),
  }),
  database: z.object({
    bytes: z.number().int().nullable().describe("The orders database's size, as D1 reports it (10 GB is its limit)"),
  }),
  worker: z
    .object({ id: z.string().nullable(), tag: z.string().nullable() })
    .describe(
      "The Worker version that answered (its version metadata; null locally): during a gradual release, which one",
    ),
  warnings: z.array(z.string()).describe("What an operator should act on"),
});

/** GET /admin/pipeline: the event pipeline's figures against their limits (docs/operations.md#the-event-pipeline). */
export const getPipelineHealth = defineOperation({
  operator: true,
  tag: "Service",
  stability: "experimental",
  documented: false,
  operationId: "getPipelineHealth",
  method: "get",
  path: "/pipeline",
  summary: "The event pipeline's storage and lag",
  description:
    "The order events' storage against its budget, the dispatcher's mark and lag, the orders database's size, the " +
    "Worker version answering; what to act on.",
  responses: { 200: { description: "The figures", body: Health } },
  errors: [],
  async handle(c) {
    const db = c.env.DB;
    const storage = await callDependency("D1", () => eventStorage(db, c.get("config").orderEventsBudgetBytes));
    const mark = Number((await callDependency("D1", () => readDispatchMark(db).first<{ mark: string }>()))?.mark ?? 0);
    const lanesBehind =
      (await callDependency("D1", () => countLanesBehind(db).first<{ behind: number }>()))?.behind ?? 0;
    const hold = await callDependency("D1", () =>
      orderWritesHold(db).first<{ since: string; sequence: string; handedOut: string }>(),
    );
    const sized = await callDependency("D1", () => db.prepare("SELECT 1").run());
    const share = storage.bytes / storage.budgetBytes;
    const lag = storage.head - mark;
    const warnings = [
      ...(share >= BUDGET_WARNING_SHARE
        ? [
            `the order events use ${Math.round(share * 100)}% of their budget: the feed reaches back less far than ` +
              `the 30 days kept otherwise`,
          ]
        : []),
      ...(lanesBehind > 0
        ? [
            `${lanesBehind} endpoint lane(s) could not take their events and are behind the dispatcher's mark (its ` +
              `log says which)`,
          ]
        : []),
      ...(hold
        ? [
            `order writes are refused since ${hold.since}: the event sequence (${hold.sequence}) is below what was ` +
              `handed out (${hold.handedOut}); raise it (docs/operations.md#restoring-d1)`,
          ]
        : []),
    ];
    return jsonBody(c, {
      orderEvents: { ...storage, share },
      dispatcher: { mark, lag, lanesBehind },
      orderWrites: { heldSince: hold?.since ?? null },
      database: { bytes: typeof sized.meta.size_after === "number" ? sized.meta.size_after : null },
      worker: workerVersionOf(c),
      warnings,
    });
  },
});
