import { env } from "cloudflare:workers";
import { runInDurableObject } from "cloudflare:test";
import { describe, expect, it, vi } from "vitest";
import { countStorage } from "../../../bench/billed-calls";
import { OPERATION_USE } from "../../../bench/operation-costs";
import { NUDGE_GAP_MS, nudgedPassAt, type WebhookDispatcher } from "../../../src/webhook-delivery/dispatcher-object";
import { onAFakeClock, setClock } from "../../support/limits-clock";
import { freshWebhookOwner, makeEndpoint } from "../../support/webhook-fixtures";

/**
 * The dispatcher under a stream of API cancels (docs/design/order-events.md#dispatch): each cancel nudges it, and a
 * nudge brings the next pass forward no sooner than NUDGE_GAP_MS after the last began, so a lane is handed several
 * events a pass rather than one, and the dispatcher's alarm is set once a gap, not once a cancel.
 */
onAFakeClock();

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
    setClock(0);
    const owner = await freshWebhookOwner();
    await makeEndpoint(owner.key, { url: "https://nudged.example/hooks" });
    const stub = env.WEBHOOK_DISPATCHER.getByName("nudge-gap-test");
    const pass = () => runInDurableObject(stub, (dispatcher: WebhookDispatcher) => dispatcher.alarm());
    // A watching dispatcher: its first pass finds the endpoint, and polls again a second later.
    await pass();
    const rows = await runInDurableObject(stub, (_, state) => countStorage(state.storage));
    let passes = 0;
    try {
      for (let cancel = 1; cancel <= 20; cancel++) {
        vi.setSystemTime(Date.now() + 50);
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
    // Each pass's poll alarm and each gap's nudged alarm: no setAlarm for the nudges in between. The cost table
    // charges each cancel its share.
    expect(rows.rows().written).toBe(8);
    expect(OPERATION_USE.cancel.doRowsWritten).toBe(8 / 20);
    await runInDurableObject(stub, (_, state) => state.storage.deleteAlarm());
  });
});
