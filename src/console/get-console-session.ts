import { defineOperation } from "../framework/operations/define-operation";
import { ANY_KEY } from "../framework/operations/scopes";
import { jsonBody } from "../framework/counted-body";
import { callDependency } from "../lib/call-dependency";
import { keyOfCaller } from "../keys/caller";
import { accountOf, limitsFor } from "../account/key-record";
import { CONSOLE, ConsoleSession } from "./console-session-schemas";

const instant = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

/** GET /v2/console/session: who the console is signed in as, its limits and what is left of them now. */
export const getConsoleSession = defineOperation({
  ...CONSOLE,
  scope: ANY_KEY,
  operationId: "getConsoleSession",
  method: "get",
  path: "/console/session",
  summary: "The calling key, its limits and what is left of them",
  description:
    "The calling key (with a console session, the session's key): its name, first characters, plan, scopes, expiry " +
    "and " +
    "account; its limits, and what the Account has left of each window now; and the session's " +
    "end, if it came " +
    "with one.",
  responses: { 200: { description: "The key and its limits", body: ConsoleSession } },
  errors: [],
  async handle(c) {
    const key = keyOfCaller(c);
    const caller = c.get("caller");
    const session = caller.kind === "key" ? caller.session : undefined;
    const limits = limitsFor(key);
    const usage = await callDependency("rate limiter", () => c.env.ACCOUNTS.getByName(accountOf(key)).usage());
    return jsonBody(
      c,
      {
        key: {
          id: key.id,
          name: key.name,
          start: key.start,
          plan: key.plan,
          scopes: key.scopes,
          expiresAt: key.expiresAt ?? null,
          budget: accountOf(key),
        },
        limits,
        remaining: {
          minute: {
            remaining: Math.max(0, limits.perMinute - usage.minute.count),
            resetAt: instant(usage.minute.reset),
          },
          day: { remaining: Math.max(0, limits.perDay - usage.day.count), resetAt: instant(usage.day.reset) },
        },
        session: session ? { expiresAt: session.expiresAt } : null,
      },
      200,
      { "Cache-Control": "no-store" },
    );
  },
});
