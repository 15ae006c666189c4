import { z } from "zod";
import { defineOperation } from "../../framework/operations/define-operation";
import { ApiError } from "../../framework/api-error";
import { jsonBody } from "../../framework/counted-body";
import { strictQuery } from "../../framework/operations/strict-query";
import { CLOUDFLARE_API, runAnalyticsSql } from "../../lib/cloudflare-api";
import { callDependency } from "../../lib/call-dependency";
import {
  BAN_SEEN_MINUTES,
  TRAFFIC_RANGES,
  readAddressGroups,
  readBans,
  readAccounts,
  readSeries,
  trafficQueries,
  type TrafficRange,
} from "./traffic-queries";

const RANGES = Object.keys(TRAFFIC_RANGES) as TrafficRange[];
const PARAMETERS = { range: `one of ${RANGES.join(", ")} (default 1h)` } as const;
/** The SQL API answers within seconds; one that does not is unavailable, and the view says so rather than hang. */
const SQL_TIMEOUT_MS = 10_000;

const Budget = z.object({
  budget: z.string().describe("The account (its first key's id)"),
  requests: z.number().int(),
  refused: z.number().int(),
});
const Traffic = z.object({
  range: z.enum(RANGES as [TrafficRange, ...TrafficRange[]]),
  bucketSeconds: z.number().int(),
  series: z
    .array(
      z.object({
        start: z.string(),
        admitted: z.number().int(),
        limited: z.number().int(),
        banned: z.number().int(),
        unauthenticated: z.number().int(),
        error: z.number().int(),
      }),
    )
    .describe("Requests of every account and caller without a key, by outcome, a bucket at a time"),
  topByRequests: z.array(Budget),
  topByRefusals: z.array(Budget).describe("Accounts with refusals, most first"),
  bans: z
    .array(z.object({ caller: z.string(), refused: z.number().int(), lastRefusedAt: z.string() }))
    .describe(`Accounts and address groups (ip:...) refused as banned within ${BAN_SEEN_MINUTES} minutes`),
  keyless: z
    .array(z.object({ addressGroup: z.string(), requests: z.number().int(), refused: z.number().int() }))
    .describe("Address groups whose callers without a valid key were refused, most first"),
  dataset: z.string(),
});

/** GET /admin/traffic: every account's traffic from Analytics Engine, five queries for any number. */
export const getTraffic = defineOperation({
  operator: true,
  tag: "Service",
  stability: "experimental",
  documented: false,
  operationId: "getTraffic",
  method: "get",
  path: "/traffic",
  summary: "Requests across every account",
  description:
    "Admitted and refused requests a bucket at a time, the top accounts by requests and by refusals, bans refusing " +
    "now, keyless refusals by address group; from the request analytics.",
  responses: { 200: { description: "The traffic", body: Traffic } },
  errors: ["invalid_query", "traffic_not_configured", "service_unavailable"],
  async handle(c) {
    const { value, invalid } = strictQuery(new URL(c.req.url).searchParams, PARAMETERS);
    const rangeText = value("range") ?? "1h";
    if (!Object.hasOwn(TRAFFIC_RANGES, rangeText)) throw invalid("range", rangeText);
    const range = rangeText as TrafficRange;
    const { accountId, dataset } = c.get("config").analytics;
    const apiToken = c.env.ANALYTICS_READ_TOKEN;
    const missing = [
      !accountId && "the ANALYTICS_ACCOUNT_ID var",
      !dataset && "the ANALYTICS_DATASET var",
      !apiToken && "the ANALYTICS_READ_TOKEN secret",
    ].filter(Boolean);
    if (!accountId || !dataset || !apiToken) {
      throw new ApiError(
        "traffic_not_configured",
        `Traffic is read from the request analytics through Analytics Engine's SQL API, and this environment lacks ` +
          `${missing.join(" and ")}. Locally the runtime drops the analytics, so there is nothing to read ` +
          `(docs/operations.md#traffic).`,
      );
    }
    const access = { accountId, apiToken, apiBase: CLOUDFLARE_API };
    const queries = trafficQueries(dataset, range);
    const now = Date.now();
    // An answer that cannot be read is the dependency's failure, as one that never came.
    const ask = <T>(sql: string, read: (answer: unknown) => T) =>
      callDependency("Analytics Engine", async () => read(await runAnalyticsSql(access, sql, SQL_TIMEOUT_MS)));
    const [series, topByRequests, topByRefusals, bans, keyless] = await Promise.all([
      ask(queries.series, (answer) => readSeries(answer, range, now)),
      ask(queries.topByRequests, readAccounts),
      ask(queries.topByRefusals, (answer) => readAccounts(answer).filter((budget) => budget.refused > 0)),
      ask(queries.bans, readBans),
      ask(queries.keyless, readAddressGroups),
    ]);
    return jsonBody(
      c,
      {
        range,
        bucketSeconds: TRAFFIC_RANGES[range].bucketMinutes * 60,
        series,
        topByRequests,
        topByRefusals,
        bans,
        keyless,
        dataset,
      },
      200,
      { "Cache-Control": "no-store" },
    );
  },
});
