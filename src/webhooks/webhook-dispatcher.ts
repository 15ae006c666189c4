import { DurableObject } from "cloudflare:workers";
import { dispatchEvents } from "./dispatch-events";

/** While endpoints exist, how often the dispatcher looks for events written by other systems (the API's own cancels nudge it). */
export const DISPATCH_POLL_MS = 1_000;

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
   * An event was just written: brings a pass that is due forward. A sleeping
   * dispatcher (no endpoints, so no pass due) stays asleep: nothing waits for
   * the event, and a cancel costs no pass.
   */
  async nudge(): Promise<void> {
    const due = await this.ctx.storage.getAlarm();
    if (due !== null && due > Date.now()) await this.ctx.storage.setAlarm(Date.now());
  }

  /** Where the next pass starts, for operators and tests. */
  mark(): string {
    return this.ctx.storage.kv.get<string>("mark") ?? "0";
  }

  async alarm(): Promise<void> {
    const result = await dispatchEvents(this.env.DB, this.env.WEBHOOK_DELIVERIES, this.mark(), new Date().toISOString());
    // Stored only once the messages are on the queue: a crash before re-sends them (at least once).
    this.ctx.storage.kv.put("mark", result.mark);
    if (result.more) await this.ctx.storage.setAlarm(Date.now());
    else if (result.endpoints > 0) await this.ctx.storage.setAlarm(Date.now() + DISPATCH_POLL_MS);
  }
}
