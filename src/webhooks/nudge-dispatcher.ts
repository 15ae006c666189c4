import type { Context } from "hono";
import type { AppEnv } from "../env";
import { logLine } from "../lib/log";

/** The one dispatcher's name: one object reads the feed for every endpoint (webhook-dispatcher.ts). */
export const DISPATCHER_NAME = "order-events";

export const dispatcherOf = (env: Env) => env.WEBHOOK_DISPATCHER.getByName(DISPATCHER_NAME);

/** Calls the dispatcher after the response; a failure only costs a second, until its next poll (docs/design/order-events.md#delivery). */
function inBackground(c: Context<AppEnv>, call: (dispatcher: ReturnType<typeof dispatcherOf>) => Promise<void>): void {
  c.executionCtx.waitUntil(
    call(dispatcherOf(c.env)).catch((error: unknown) =>
      logLine("warn", c.get("requestId"), "the webhook dispatcher could not be nudged; its next poll delivers the event", { error: String(error) }),
    ),
  );
}

/** An event was just written through the API: delivered at once rather than at the next poll. */
export const nudgeDispatcher = (c: Context<AppEnv>) => inBackground(c, (dispatcher) => dispatcher.nudge());

/** An endpoint was just made: the dispatcher may be asleep (there were none), and watches from now on. */
export const wakeDispatcher = (c: Context<AppEnv>) => inBackground(c, (dispatcher) => dispatcher.wake());
