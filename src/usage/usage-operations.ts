/** The usage history, for callers (`GET /v2/usage`) and operators (any key's), as the Account decided it. */
import type { Context } from "hono";
import { z } from "zod";
import { defineOperation } from "../framework/operations/define-operation";
import { documentedParameters } from "../framework/operations/strict-query";
import type { AppEnv } from "../framework/app-env";
import { accountOf } from "../account/key-record";
import { callDependency } from "../lib/call-dependency";
import type { LeaseClient } from "../account/lease-client";
import { GRANULARITIES } from "../account/usage-ledger";
import { logLine } from "../lib/log";
import { MAX_BUCKETS, USAGE_PARAMETERS, fillBuckets, readUsageQuery } from "./usage-query";
import { jsonBody } from "../framework/counted-body";

export const UsageHistory = z
  .object({
    budget: z.string().describe("The account counted: the key's id, or the first key's of a rotated pair"),
    granularity: z.enum(GRANULARITIES),
    buckets: z
      .array(
        z.object({
          start: z.string().describe("RFC 3339 UTC instant at which the bucket begins"),
          admitted: z
            .number()
            .int()
            .describe("Requests admitted in the bucket and served, as far as the limiter knows"),
          refused: z.number().int().describe("Requests the limiter refused (429) in the bucket"),
          reserved: z
            .number()
            .int()
            .describe(
              "Admissions granted in the bucket to a Worker isolate ahead of need, not yet handed back: " +
                "some may have " +
                "been spent; within 5 s they move to admitted or are gone",
            ),
        }),
      )
      .describe(`Every bucket of the range, oldest first, empty ones as zeros; at most ${MAX_BUCKETS}`),
  })
  .meta({ id: "UsageHistory" });

/** Each query parameter's JSON schema in the document; readUsageQuery() is what enforces them. */
const QUERY_SCHEMAS: Record<keyof typeof USAGE_PARAMETERS, Record<string, unknown>> = {
  granularity: { type: "string", enum: [...GRANULARITIES], default: "hour" },
  from: { type: "string", format: "date-time" },
  to: { type: "string", format: "date-time" },
};
export const usageQueryParameters = documentedParameters(USAGE_PARAMETERS, QUERY_SCHEMAS);

/** The account's history for the request's query, as the answer's JSON. */
export async function usageHistoryResponse(c: Context<AppEnv>, account: string): Promise<Response> {
  const query = readUsageQuery(new URL(c.req.url).searchParams, Date.now());
  const rows = await callDependency("rate limiter", () => c.env.ACCOUNTS.getByName(account).usageHistory(query));
  return jsonBody(c, { budget: account, granularity: query.granularity, buckets: fillBuckets(rows, query) });
}

export const getUsage = (leases: LeaseClient) =>
  defineOperation({
    operationId: "getUsage",
    scope: "orders:read",
    method: "get",
    path: "/usage",
    summary: "The caller's usage, minute by minute, hour by hour or day by day",
    tag: "Usage",
    description:
      "What the limiter admitted and refused for the calling key's account (a rotated pair shares one), " +
      "exactly as it decided: minutes and hours for 48 hours, days for 400 days. Every bucket of the range is " +
      "listed, empty ones as zeros.",
    stability: "beta",
    queryParameters: usageQueryParameters,
    responses: { 200: { description: "The account's usage history", body: UsageHistory } },
    errors: ["invalid_query"],
    async handle(c) {
      const caller = c.get("caller");
      // Scoped operations only ever see key callers; the check keeps the type honest.
      if (caller.kind !== "key") throw new Error("a scoped operation without a key");
      const account = accountOf(caller.key);
      // This isolate's leases go back first, so what was served here reads as admitted, not reserved.
      await leases.handBack(account, {
        ban: c.get("config").ban,
        limiter: (name) => c.env.ACCOUNTS.getByName(name),
        onBackgroundError: (error) =>
          logLine("error", c.get("requestId"), "handing back leases before the usage history failed", {
            error: String(error),
          }),
      });
      return usageHistoryResponse(c, account);
    },
  });
