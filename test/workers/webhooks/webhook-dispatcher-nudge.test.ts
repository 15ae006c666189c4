import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { countStorage } from "../../../bench/billed-calls";
import { OPERATION_USE } from "../../../bench/operation-costs";
import type { WebhookDispatcher } from "../../../src/webhook-delivery/dispatcher-object";
import {
  BUSY_FOR_MS,
  DISPATCH_POLL_MS,
  NUDGE_GAP_MS,
  nudgedPassAt,
} from "../../../src/webhook-delivery/dispatch-schedule";
import { onAFakeClock, setClock } from "../../support/limits-clock";
import { withBatch } from "../../support/faults";
import { seedOrders } from "../../support/seed";
import { freshWebhookOwner, makeEndpoint, quietLanes } from "../../support/webhook-fixtures";

/**
 * The dispatcher under a stream of API cancels (docs/design/order-events.md#dispatch): each cancel nudges it, and a
 * nudge brings the next pass forward no sooner than NUDGE_GAP_MS after the last began, so a lane is handed several
 * events a pass rather than one, and the dispatcher's alarm is set once a gap, not once a cancel. Another system's
 * stream nudges nobody: the passes that find it poll closely (dispatch-schedule.ts).
 */
onAFakeClock();

/**
 * A pass of the dispatcher named so, run as the platform runs its alarm (no longer set while it runs), its lanes taking
 * their hand-offs quietly; the wait until the next pass it set.
 */
const passOf = (stub: DurableObjectStub<WebhookDispatcher>, db?: (dispatcher: WebhookDispatcher) => D1Database) =>
  runInDurableObject(stub, async (dispatcher: WebhookDispatcher, state) => {
    await state.storage.deleteAlarm();
    const object = dispatcher as unknown as { env: Env };
    const real = object.env;
    object.env = {
      ...real,
      DB: db?.(dispatcher) ?? real.DB,
      WEBHOOK_LANES: { getByName: () => ({ enqueue: quietLanes }) } as unknown as Env["WEBHOOK_LANES"],
    };
    try {
      await dispatcher.alarm();
    } finally {
      object.env = real;
    }
    return (await state.storage.getAlarm())! - Date.now();
  });

/** A dispatcher of that name on a fake clock at 0, with an endpoint to watch. */
async function watchingDispatcher(name: string): Promise<DurableObjectStub<WebhookDispatcher>> {
  setClock(0);
  const owner = await freshWebhookOwner();
  await makeEndpoint(owner.key, { url: `https://${name}.example/hooks` });
  return env.WEBHOOK_DISPATCHER.getByName(name);
}

describe("a nudge", () => {
  it("wants a pass as soon as the gap after the last allows, only sooner than the pass due, and none while asleep", () => {
    const now = 1_000_000;
    expect(nudgedPassAt(now + 1_000, true, now - 10, now)).toBe(now - 10 + NUDGE_GAP_MS);
    expect(nudgedPassAt(now + 1_000, true, now - NUDGE_GAP_MS * 4, now)).toBe(now);
    // A pass due within the gap already: left as it is.
    expect(nudgedPassAt(now + 100, true, now - 10, now)).toBeUndefined();
    // No pass due: one while the dispatcher watches (its alarm may have been lost), none while it sleeps.
    expect(nudgedPassAt(null, true, 0, now)).toBe(now);
    expect(nudgedPassAt(null, false, 0, now)).toBeUndefined();
  });

  it("runs at most 4 passes a second under 20 cancels a second, and sets the alarm once a pass", async () => {
    const stub = await watchingDispatcher("nudge-gap-test");
    const pass = () => passOf(stub);
    // A dispatcher in the stream: its pass has handed a cancel's event, and it polls again within the gap.
    await seedOrders([{ id: 500 }]);
    expect(await pass()).toBe(NUDGE_GAP_MS);
    const rows = await runInDurableObject(stub, (_, state) => countStorage(state.storage));
    let passes = 0;
    try {
      for (let cancel = 1; cancel <= 20; cancel++) {
        vi.setSystemTime(Date.now() + 50);
        // The cancel's event, then its nudge.
        await seedOrders([{ id: 500 + cancel }]);
        await stub.nudge();
        // The platform runs the alarm once it is due.
        const due = await runInDurableObject(stub, (_, state) => state.storage.getAlarm());
        if (due !== null && due <= Date.now()) {
          await pass();
          passes += 1;
        }
      }
    } finally {
      rows.restore();
    }
    expect(passes).toBe(4);
    // Each pass's alarm and its mark, no more: each pass polls again within the gap, so no nudge sets an alarm. The
    // cost table charges each cancel its share.
    expect(rows.rows().written).toBe(8);
    expect(OPERATION_USE.cancel.doRowsWritten).toBe(8 / 20);
    await runInDurableObject(stub, (_, state) => state.storage.deleteAlarm());
  });

  it("that comes during a pass keeps the pass it wants: the pass ending does not put it off to the next poll", async () => {
    const stub = await watchingDispatcher("nudge-in-pass-test");
    await passOf(stub);
    // Quiet: the slow pace.
    vi.setSystemTime(Date.now() + BUSY_FOR_MS);
    expect(await passOf(stub)).toBe(DISPATCH_POLL_MS);
    vi.setSystemTime(Date.now() + DISPATCH_POLL_MS);
    // A cancel nudges the dispatcher while its pass reads the feed.
    let nudged = false;
    const nudgedWhileReading = (dispatcher: WebhookDispatcher) =>
      withBatch(async (real, statements) => {
        const answers = await real(statements);
        if (!nudged) await dispatcher.nudge();
        nudged = true;
        return answers;
      });
    expect(await passOf(stub, nudgedWhileReading)).toBe(NUDGE_GAP_MS);
    expect(nudged).toBe(true);
    await runInDurableObject(stub, (_, state) => state.storage.deleteAlarm());
  });
});

describe("a stream of changes another system writes", () => {
  it("nudges nobody, so a pass that hands its events polls every NUDGE_GAP_MS for BUSY_FOR_MS, then every DISPATCH_POLL_MS", async () => {
    const stub = await watchingDispatcher("busy-poll-test");
    const pass = () => passOf(stub);
    await pass();
    vi.setSystemTime(Date.now() + BUSY_FOR_MS);
    expect(await pass()).toBe(DISPATCH_POLL_MS);
    // Another system writes an order: no nudge, and the pass that finds its event keeps looking closely.
    await seedOrders([{ id: 41 }]);
    vi.setSystemTime(Date.now() + DISPATCH_POLL_MS);
    expect(await pass()).toBe(NUDGE_GAP_MS);
    vi.setSystemTime(Date.now() + BUSY_FOR_MS - 1);
    expect(await pass()).toBe(NUDGE_GAP_MS);
    vi.setSystemTime(Date.now() + 1);
    expect(await pass()).toBe(DISPATCH_POLL_MS);
    await runInDurableObject(stub, (_, state) => state.storage.deleteAlarm());
  });
});
