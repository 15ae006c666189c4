/**
 * The worker's vars, parsed and checked once: a typo must not become NaN or a default nobody chose. An invalid var
 * fails `npm run check:config` and makes the worker answer 503 (docs/operations.md#configuration).
 */
import { z } from "zod";
import { VERSION_PREFIX } from "./service-identity";

/** zod's error option: "is missing" when the var is not set at all, else what it must be. */
const rule = (message: string) => ({
  error: (issue: { input?: unknown }) => (issue.input === undefined ? "is missing" : message),
});
const URL_RULE = `must be an http(s) URL ending in ${VERSION_PREFIX}`;
const baseUrl = z
  .url({ protocol: /^https?$/, ...rule(URL_RULE) })
  .refine((url) => url.endsWith(VERSION_PREFIX), URL_RULE);
const positiveWholeNumber = z
  .string(rule("must be a positive whole number"))
  .regex(/^[1-9][0-9]{0,14}$/, "must be a positive whole number")
  .transform(Number);
const onOff = z.enum(["on", "off"], rule('must be "on" or "off"')).transform((value) => value === "on");
const readAhead = z
  .string(rule("must be a whole number from 0 to 8"))
  .regex(/^[0-8]$/, "must be a whole number from 0 to 8")
  .transform(Number);
const reuseMs = z
  .string(rule("must be a whole number of milliseconds from 0 to 60000"))
  .regex(/^(0|[1-9][0-9]{0,4})$/, "must be a whole number of milliseconds from 0 to 60000")
  .transform(Number)
  .refine((ms) => ms <= 60_000, "must be a whole number of milliseconds from 0 to 60000");
const SCHEDULE_RULE = "must be one or more whole numbers of seconds from 1 to 86400 (a day), comma-separated";
const retrySeconds = z
  .string(rule(SCHEDULE_RULE))
  .regex(/^[1-9][0-9]{0,4}(,[1-9][0-9]{0,4})*$/, SCHEDULE_RULE)
  .transform((text) => text.split(",").map(Number))
  .refine((delays) => delays.every((seconds) => seconds <= 86_400) && delays.length <= 100, SCHEDULE_RULE);
const PERIOD_RULE = "must be a whole number of seconds, 1 or more";
const periodSeconds = z
  .string(rule(PERIOD_RULE))
  .regex(/^[1-9][0-9]{0,9}$/, PERIOD_RULE)
  .transform(Number);
const bothPeriods = (vars: { WEBHOOK_FAILING_AFTER: unknown; WEBHOOK_DISABLE_AFTER: unknown }) =>
  typeof vars.WEBHOOK_FAILING_AFTER === "number" && typeof vars.WEBHOOK_DISABLE_AFTER === "number";
/** A day: the shortest either period of a failing endpoint may be in production. */
const DAY_SECONDS = 86_400;
const isoDate = z
  .union([z.iso.date(), z.iso.datetime({ offset: true })], rule("must be an ISO 8601 date or date-time"))
  .transform((value) => Date.parse(value));

const ACCESS_TEAM_RULE = "must be your Access team's domain, <team>.cloudflareaccess.com";
const accessTeamDomain = z
  .string(rule(ACCESS_TEAM_RULE))
  .regex(/^[a-z0-9](?:[a-z0-9-]{0,61}[a-z0-9])?\.cloudflareaccess\.com$/, ACCESS_TEAM_RULE);
const accountId = z
  .string(rule("must be your Cloudflare account id (32 hex digits)"))
  .regex(/^[0-9a-f]{32}$/, "must be your Cloudflare account id (32 hex digits)");
const datasetName = z
  .string(rule("must be the REQUESTS binding's dataset name"))
  .regex(/^[A-Za-z0-9_]+$/, "must be the REQUESTS binding's dataset name (letters, digits, _)");
const accessAudience = z
  .string(rule("must be the Access application's audience tag"))
  .regex(/^[0-9a-f]{64}$/, "must be the Access application's audience tag (64 hex digits)");

/** Where GitHub publishes its secret scanning keys, unless SECRET_SCANNING_KEYS_URL says otherwise. */
export const GITHUB_SECRET_SCANNING_KEYS_URL = "https://api.github.com/meta/public_keys/secret_scanning";
const keysUrl = z
  .string(rule("must be an http(s) URL"))
  .refine((text) => /^https?:\/\//.test(text) && URL.canParse(text), "must be an http(s) URL");

/** The order events' storage budget when ORDER_EVENTS_BUDGET_MB is unset (docs/design/order-events.md#capacity). */
export const DEFAULT_ORDER_EVENTS_BUDGET_MB = 5_120;

const Vars = z
  .object({
    BASE_URL: baseUrl,
    PRODUCTION_BASE_URL: baseUrl,
    STAGING_BASE_URL: baseUrl,
    BAN_THRESHOLD: positiveWholeNumber,
    BAN_SECONDS: positiveWholeNumber,
    PETS_DEPRECATED_AT: isoDate,
    PETS_SUNSET_AT: isoDate,
    ORDER_LIST_CACHE: onOff,
    ORDER_LIST_READ_AHEAD: readAhead,
    ORDER_LIST_VERSION_REUSE_MS: reuseMs,
    SUBREQUEST_LIMIT: positiveWholeNumber,
    WEBHOOK_RETRY_SECONDS: retrySeconds,
    WEBHOOK_FAILING_AFTER: periodSeconds,
    WEBHOOK_DISABLE_AFTER: periodSeconds,
    ORDER_EVENTS_BUDGET_MB: positiveWholeNumber.optional(),
    ACCESS_TEAM_DOMAIN: accessTeamDomain.optional(),
    ACCESS_AUD: accessAudience.optional(),
    ANALYTICS_ACCOUNT_ID: accountId.optional(),
    ANALYTICS_DATASET: datasetName.optional(),
    SECRET_SCANNING_KEYS_URL: keysUrl.optional(),
  })
  .refine((vars) => (vars.ACCESS_TEAM_DOMAIN === undefined) === (vars.ACCESS_AUD === undefined), {
    path: ["ACCESS_AUD"],
    message:
      "and ACCESS_TEAM_DOMAIN go together: set both to put the operators' side behind Cloudflare Access, or neither",
  })
  // Only once both are numbers: a var that is not says so itself, and nothing more.
  .refine((vars) => !bothPeriods(vars) || vars.WEBHOOK_FAILING_AFTER < vars.WEBHOOK_DISABLE_AFTER, {
    path: ["WEBHOOK_FAILING_AFTER"],
    message: "must be shorter than WEBHOOK_DISABLE_AFTER: an endpoint's owner is told it fails before it is disabled",
  })
  // A production endpoint disabled after a few minutes of a receiver's outage would be an incident of our own making.
  .refine((vars) => vars.BASE_URL !== vars.PRODUCTION_BASE_URL || vars.WEBHOOK_FAILING_AFTER >= DAY_SECONDS, {
    path: ["WEBHOOK_FAILING_AFTER"],
    message: `must be at least ${DAY_SECONDS} (a day) in production`,
  })
  .refine((vars) => vars.BASE_URL !== vars.PRODUCTION_BASE_URL || vars.WEBHOOK_DISABLE_AFTER >= DAY_SECONDS, {
    path: ["WEBHOOK_DISABLE_AFTER"],
    message: `must be at least ${DAY_SECONDS} (a day) in production`,
  })
  .refine((vars) => vars.PETS_SUNSET_AT > vars.PETS_DEPRECATED_AT, {
    path: ["PETS_SUNSET_AT"],
    message: "must be later than PETS_DEPRECATED_AT",
  })
  .transform((vars) => ({
    baseUrl: vars.BASE_URL,
    productionBaseUrl: vars.PRODUCTION_BASE_URL,
    stagingBaseUrl: vars.STAGING_BASE_URL,
    ban: { threshold: vars.BAN_THRESHOLD, seconds: vars.BAN_SECONDS },
    /** Unix milliseconds. */
    pets: { deprecatedAt: vars.PETS_DEPRECATED_AT, sunsetAt: vars.PETS_SUNSET_AT },
    /** docs/design/order-list.md#the-cache: the list cache, its read-ahead, how long a version read is reused. */
    orderList: {
      cache: vars.ORDER_LIST_CACHE,
      readAhead: vars.ORDER_LIST_READ_AHEAD,
      versionReuseMs: vars.ORDER_LIST_VERSION_REUSE_MS,
    },
    /** The plan's subrequests per invocation, bounding the pages one list may read. */
    subrequestLimit: vars.SUBREQUEST_LIMIT,
    /** Seconds before each retry of a failed webhook delivery (docs/operations.md#webhooks). */
    webhookRetrySeconds: vars.WEBHOOK_RETRY_SECONDS,
    /** A failing endpoint: its owner told after failingAfterMs, it disabled after disableAfterMs. */
    webhookHealth: {
      failingAfterMs: vars.WEBHOOK_FAILING_AFTER * 1000,
      disableAfterMs: vars.WEBHOOK_DISABLE_AFTER * 1000,
    },
    /** The order events' storage budget in bytes (docs/design/order-events.md#retention). */
    orderEventsBudgetBytes: (vars.ORDER_EVENTS_BUDGET_MB ?? DEFAULT_ORDER_EVENTS_BUDGET_MB) * 1024 * 1024,
    /** The Access application in front of the operators' side; undefined: operator tokens alone. */
    access:
      vars.ACCESS_TEAM_DOMAIN === undefined
        ? undefined
        : { teamDomain: vars.ACCESS_TEAM_DOMAIN, audience: vars.ACCESS_AUD! },
    /** Where the operators' traffic view reads analytics (docs/operations.md#traffic), with ANALYTICS_READ_TOKEN. */
    analytics: { accountId: vars.ANALYTICS_ACCOUNT_ID, dataset: vars.ANALYTICS_DATASET },
    /** Where GitHub's secret scanning keys are fetched from (docs/operations.md#secret-scanning). */
    secretScanningKeysUrl: vars.SECRET_SCANNING_KEYS_URL ?? GITHUB_SECRET_SCANNING_KEYS_URL,
  }));

export type Config = z.output<typeof Vars>;

export type ConfigResult = { ok: true; config: Config } | { ok: false; problems: string[] };

/** Every problem with the vars, one line each, naming the var and its value. */
export function readConfig(vars: Record<string, unknown>): ConfigResult {
  const result = Vars.safeParse(vars);
  if (result.success) return { ok: true, config: result.data };
  return {
    ok: false,
    problems: result.error.issues.map((issue) => {
      const name = String(issue.path[0] ?? "vars");
      return vars[name] === undefined
        ? `${name} ${issue.message}`
        : `${name} ${issue.message}, got ${JSON.stringify(vars[name])}`;
    }),
  };
}
