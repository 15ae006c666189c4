import { env } from "cloudflare:workers";
import { describe, expect, it } from "vitest";
import { BUDGET_WARNING_SHARE, EVENT_ROW_BYTES } from "../../../src/events/prune-order-events";
import { apiWith } from "../../support/request";
import { clearOrders, seedOrders } from "../../support/seed";
import { feedHead } from "../../support/webhook-fixtures";

/**
 * GET /admin/pipeline (docs/operations.md#the-event-pipeline): the dispatcher's lag counted from its mark, the
 * database's size as D1 reports it, and the warning an operator acts on once the events near their budget.
 */
const asOperator = (bindings: Env = env) =>
  apiWith(bindings, "/admin/pipeline", { key: null, headers: { Authorization: "Bearer operator-token-for-tests" } });

interface Health {
  orderEvents: { head: number; rows: number; bytes: number; budgetBytes: number; share: number };
  dispatcher: { mark: number; lag: number };
  database: { bytes: number | null };
  warnings: string[];
}

describe("the pipeline's health", () => {
  it("counts the dispatcher's lag as the events written after its mark, and 0 once it is caught up", async () => {
    await clearOrders();
    await env.DB.prepare("UPDATE webhook_dispatch SET mark = ?1")
      .bind(await feedHead())
      .run();
    await seedOrders([{ id: 1 }, { id: 2 }, { id: 3 }]);
    const behind = await (await asOperator()).json<Health>();
    expect(behind.dispatcher.lag).toBe(3);
    expect(behind.dispatcher.lag).toBe(behind.orderEvents.head - behind.dispatcher.mark);
    await env.DB.prepare("UPDATE webhook_dispatch SET mark = ?1")
      .bind(await feedHead())
      .run();
    expect((await (await asOperator()).json<Health>()).dispatcher.lag).toBe(0);
  });

  it("reports the database's size as D1 measures it, which grows as rows are written", async () => {
    const before = (await (await asOperator()).json<Health>()).database.bytes;
    expect(before).toEqual(expect.any(Number));
    await seedOrders(Array.from({ length: 300 }, (_, i) => ({ id: 10_000 + i })));
    const after = (await (await asOperator()).json<Health>()).database.bytes;
    expect(after).toBeGreaterThan(before!);
  });

  it("warns once the events' share of their budget reaches the warning share, and not below it", async () => {
    const { orderEvents } = await (await asOperator()).json<Health>();
    expect(orderEvents.bytes).toBe(orderEvents.rows * EVENT_ROW_BYTES);
    // The smallest budget a var allows is a megabyte: rows enough to cross the share of one, then fewer.
    const crossing = Math.ceil((BUDGET_WARNING_SHARE * 1024 * 1024) / EVENT_ROW_BYTES);
    const tight = { ...env, ORDER_EVENTS_BUDGET_MB: "1" } as Env;
    if (orderEvents.rows < crossing) {
      await seedOrders(Array.from({ length: crossing - orderEvents.rows }, (_, i) => ({ id: 100_000 + i })));
    }
    const head = (await (await asOperator()).json<Health>()).orderEvents.head;
    await env.DB.prepare("UPDATE order_event_retention SET pruned_through = ?1 WHERE id = 1")
      .bind(head - crossing)
      .run();
    const near = await (await asOperator(tight)).json<Health>();
    expect(near.orderEvents.share).toBeGreaterThanOrEqual(BUDGET_WARNING_SHARE);
    expect(near.warnings).toContainEqual(expect.stringMatching(/^the order events use \d+% of their budget/));
    await env.DB.prepare("UPDATE order_event_retention SET pruned_through = ?1 WHERE id = 1")
      .bind(head - crossing + 2)
      .run();
    const below = await (await asOperator(tight)).json<Health>();
    expect(below.orderEvents.share).toBeLessThan(BUDGET_WARNING_SHARE);
    expect(below.warnings.filter((warning) => warning.startsWith("the order events use"))).toEqual([]);
  });
});
