import { DurableObject } from "cloudflare:workers";
import { logLine } from "../lib/log";
import { eventSequence } from "../events/event-sequence";
import { holdOrderWrites } from "../orders/order-writes-hold";
import { dispatchEvents } from "./dispatch-pass";
import { laneOf } from "./lane-calls";
import {
  afterPass,
  alarmAfterPass,
  failedPassRetryMs,
  FAILED_PASS_RETRY_MAX_MS,
  nudgedPassAt,
} from "./dispatch-schedule";

/**
 * The webhook dispatcher (docs/design/order-events.md#dispatch): a Durable Object whose alarm runs dispatch passes. Its
 * mark is in D1, so a lost storage resumes where it was. It watches while endpoints exist (dispatch-schedule.ts), API
 * cancels bring a pass forward, and otherwise it sleeps until woken.
 */
export class WebhookDispatcher extends DurableObject<Env> {
  /** When this instance's last pass began; a new instance has none, and its first nudge runs one now. */
  private lastPassAt = 0;
  /** When its last pass that handed events began: a new instance polls at its slower pace until one does. */
  private lastHandedAt = -Infinity;

  /** Runs a pass now (unless one is due sooner): there may be an endpoint to watch for now, or its alarm was lost. */
  async wake(): Promise<void> {
    const due = await this.ctx.storage.getAlarm();
    if (due === null || due > Date.now()) await this.ctx.storage.setAlarm(Date.now());
  }

  /** An event was written: brings a due pass forward; a sleeping dispatcher stays asleep. */
  async nudge(): Promise<void> {
    const watching = this.ctx.storage.kv.get<boolean>("watching") === true;
    const at = nudgedPassAt(await this.ctx.storage.getAlarm(), watching, this.lastPassAt, Date.now());
    if (at !== undefined) await this.ctx.storage.setAlarm(at);
  }

  /** Never throws (the platform gives up on a failing alarm): a failed pass retries with backoff, the mark unmoved. */
  async alarm(): Promise<void> {
    const storage = this.ctx.storage.kv;
    const now = Date.now();
    this.lastPassAt = now;
    let next: number | null;
    try {
      // The highest mark is kept here too, where a D1 restore cannot rewind it: below it a new event could take an id a
      // lane already holds, so nothing is handed out until the sequence passes it.
      const highest = storage.get<string>("highestMark");
      if (highest !== undefined) {
        const sequence = await eventSequence(this.env.DB);
        if (BigInt(sequence) < BigInt(highest)) {
          // Every order write is refused meanwhile: each would make an event with an id receivers have seen.
          await holdOrderWrites(this.env.DB, sequence, highest, new Date(now).toISOString());
          logLine(
            "error",
            "webhook-dispatcher",
            "the event sequence is below what was handed out (a D1 restore): order writes are refused and nothing is " +
              "dispatched until it is raised (docs/operations.md#restoring-d1)",
            { sequence, highest },
          );
          await this.ctx.storage.setAlarm(now + FAILED_PASS_RETRY_MAX_MS);
          return;
        }
      }
      const result = await dispatchEvents(
        this.env.DB,
        (endpointId, seqs) => laneOf(this.env, endpointId).enqueue(endpointId, seqs),
        { floor: highest, now },
      );
      // Each put and delete is a row billed: only what changed is written.
      if (highest !== result.mark) storage.put("highestMark", result.mark);
      if (result.failedLanes > 0)
        logLine(
          "warn",
          "webhook-dispatcher",
          "some lanes could not be handed their events: each is behind and catches up alone",
          { endpoints: result.failedEndpoints, behind: result.behind, mark: result.mark },
        );
      if (storage.get<boolean>("watching") !== result.endpoints > 0) storage.put("watching", result.endpoints > 0);
      if (storage.get("failedPasses") !== undefined) storage.delete("failedPasses");
      ({ lastHandedAt: this.lastHandedAt, next } = afterPass(result, now, this.lastHandedAt));
    } catch (error) {
      const failed = (storage.get<number>("failedPasses") ?? 0) + 1;
      storage.put("failedPasses", failed);
      next = now + failedPassRetryMs(failed);
      logLine("warn", "webhook-dispatcher", "a dispatch pass failed; it is tried again", {
        failedPasses: failed,
        retryAt: new Date(next).toISOString(),
        error: String(error),
      });
    }
    const at = alarmAfterPass(next, await this.ctx.storage.getAlarm());
    if (at !== undefined) await this.ctx.storage.setAlarm(at);
  }
}
