import type { Context } from "hono";
import type { AppEnv } from "../env";
import { logLine } from "../lib/log";

/** The one dispatcher's name: one object reads the feed for every endpoint (webhook-dispatcher.ts). */
export const DISPATCHER_NAME = "order-events";

/** Runs a dispatch pass now. */
export const nudge = (env: Env) => env.WEBHOOK_DISPATCHER.getByName(DISPATCHER_NAME).nudge();

/**
 * Tells the dispatcher an event was just written through the API, so it is
 * delivered at once rather than at the next poll; after the response, and a
 * failure only costs that second (docs/design/order-events.md#delivery).
 */
export function nudgeDispatcher(c: Context<AppEnv>): void {
  c.executionCtx.waitUntil(
    nudge(c.env).catch((error: unknown) => logLine("warn", c.get("requestId"), "the webhook dispatcher could not be nudged; its next poll delivers the event", { error: String(error) })),
  );
}
