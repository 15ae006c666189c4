import { z } from "zod";
import { Scope } from "../framework/operations/scopes";
import { Limits, Plan } from "../account/plans";

/** The session's key and its limits, as the console's overview shows them: never the key itself. */
export const ConsoleSession = z
  .object({
    key: z.object({
      id: z.string(),
      name: z.string(),
      start: z.string().describe("The key's first 12 characters"),
      plan: Plan,
      scopes: z.array(Scope),
      expiresAt: z.string().nullable(),
      budget: z.string(),
    }),
    limits: Limits,
    remaining: z
      .object({
        minute: z.object({ remaining: z.number().int(), resetAt: z.string() }),
        day: z.object({ remaining: z.number().int(), resetAt: z.string() }),
      })
      .describe(
        "What the Account has left in each window now (admissions an isolate holds ahead of need count as " + "spent)",
      ),
    session: z
      .object({ expiresAt: z.string().describe("When the session ends, at the latest (RFC 3339)") })
      .nullable()
      .describe("The console session the request came with; null for a request with a key"),
  })
  .meta({ id: "ConsoleSession" });

export const SignedIn = z
  .object({ expiresAt: z.string().describe("When the session ends, at the latest (RFC 3339)") })
  .meta({ id: "ConsoleSignIn" });

export const RedeemConsoleLink = z.strictObject({
  token: z.string().describe("The token from the link's fragment (#link=...)"),
});

/** What every session operation shares. */
export const CONSOLE = { tag: "Console", stability: "beta" } as const;
