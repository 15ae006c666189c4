import { DurableObject } from "cloudflare:workers";
import { logLine } from "../lib/log";
import { dispatchEvents } from "./dispatch-pass";
import { resendOverdueDeliveries } from "./resend-overdue-deliveries";

/** While endpoints exist, how often the dispatcher looks for events written by other systems (the API's own cancels nudge it). */
export const DISPATCH_POLL_MS = 1_000;

/** How often a pass also sweeps for deliveries that lost their message. */
export const SWEEP_EVERY_MS = 30_000;

/** The longest wait before a pass that failed is tried again: bounds how late delivery resumes after an outage. */
export const FAILED_PASS_RETRY_MAX_MS = 10_000;

/** The wait after the `failed`th pass in a row failed: 1, 2, 4, 8 s, then FAILED_PASS_RETRY_MAX_MS. */
export const failedPassRetryMs = (failed: number) => Math.min(FAILED_PASS_RETRY_MAX_MS, DISPATCH_POLL_MS * 2 ** (failed - 1));

/**
 * The webhook dispatcher (docs/design/order-events.md#delivery): a Durable
 * Object whose alarm runs dispatch passes and keeps the mark they reach in
 * its storage, so a restart resumes where it was. It watches once a second
 * while there are endpoints, and a cancel through the API brings the next
 * pass forward; otherwise it sleeps until woken (an endpoint made, the daily cron).
 */
export class WebhookDispatcher extends DurableObject<Env> {
  /** Runs a pass now (unless one is due sooner): there may be an endpoint to watch for now. */
  async wake(): Promise<void> {
    const due = await this.ctx.storage.getAlarm();
    if (due === null || due > Date.now()) await this.ctx.storage.setAlarm(Date.now());
  }

  /**
   * An event was just written: brings a pass that is due forward, or sets
   * one where a watching dispatcher has none (an alarm can be lost). A
   * sleeping dispatcher (no endpoints) stays asleep: nothing waits for the
   * event, and a cancel costs no pass.
   */
  async nudge(): Promise<void> {
    const due = await this.ctx.storage.getAlarm();
    const watching = this.ctx.storage.kv.get<boolean>("watching") === true;
    if (due === null ? watching : due > Date.now()) await this.ctx.storage.setAlarm(Date.now());
  }

  /** Where the next pass starts, for operators and tests. */
  mark(): string {
    return this.ctx.storage.kv.get<string>("mark") ?? "0";
  }

  /**
   * Never throws: the platform gives up on an alarm after a few failed
   * retries, and nothing would set it again until an endpoint is made. A
   * failed pass (D1 down) is tried again with backoff up to
   * FAILED_PASS_RETRY_MAX_MS, its mark unmoved (docs/design/order-events.md#faults).
   */
  async alarm(): Promise<void> {
    const storage = this.ctx.storage.kv;
    const now = Date.now();
    let next: number | null;
    try {
      const result = await dispatchEvents(this.env.DB, this.env.WEBHOOK_DELIVERIES, this.mark(), new Date(now).toISOString());
      // Stored only once the messages are on the queue: a crash before re-sends them (at least once).
      storage.put("mark", result.mark);
      if (now - (storage.get<number>("sweptAt") ?? 0) >= SWEEP_EVERY_MS) {
        await resendOverdueDeliveries(this.env.DB, this.env.WEBHOOK_DELIVERIES, now);
        storage.put("sweptAt", now);
      }
      storage.put("watching", result.endpoints > 0);
      storage.delete("failedPasses");
      next = result.more ? now : result.endpoints > 0 ? now + DISPATCH_POLL_MS : null;
    } catch (error) {
      const failed = (storage.get<number>("failedPasses") ?? 0) + 1;
      storage.put("failedPasses", failed);
      next = now + failedPassRetryMs(failed);
      logLine("warn", "webhook-dispatcher", "a dispatch pass failed; it is tried again", { failedPasses: failed, retryAt: new Date(next).toISOString(), error: String(error) });
    }
    if (next !== null) await this.ctx.storage.setAlarm(next);
  }
}
