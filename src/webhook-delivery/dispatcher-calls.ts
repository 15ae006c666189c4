import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import { callDependency } from "../lib/call-dependency";
import { logLine } from "../lib/log";

/** The one dispatcher's name: one object reads the feed for every endpoint (dispatcher-object.ts). */
export const DISPATCHER_NAME = "order-events";

export const dispatcherOf = (env: Env) => env.WEBHOOK_DISPATCHER.getByName(DISPATCHER_NAME);

/** Calls the dispatcher after the response, once more on failure; a lost wake logs an error. */
function inBackground(
  c: Context<AppEnv>,
  call: (dispatcher: ReturnType<typeof dispatcherOf>) => Promise<void>,
  lost: { level: "warn" | "error"; message: string },
): void {
  c.executionCtx.waitUntil(
    callDependency("webhook dispatcher", () => call(dispatcherOf(c.env))).catch((error: unknown) =>
      logLine(lost.level, c.get("requestId"), lost.message, { error: String(error) }),
    ),
  );
}

/** An event was just written through the API: delivered at once rather than at the next poll. */
export const nudgeDispatcher = (c: Context<AppEnv>) =>
  inBackground(c, (dispatcher) => dispatcher.nudge(), {
    level: "warn",
    message: "the webhook dispatcher could not be nudged; its next poll delivers the event",
  });

/** An endpoint was just made: the dispatcher may be asleep (there were none), and watches from now on. */
export const wakeDispatcher = (c: Context<AppEnv>) =>
  inBackground(c, (dispatcher) => dispatcher.wake(), {
    level: "error",
    message:
      "the webhook dispatcher could not be woken for a new endpoint; its deliveries start at the next endpoint made " +
      "or the daily cron",
  });
