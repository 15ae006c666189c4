import { z } from "zod";
import { jsonBody } from "../framework/counted-body";
import { callDependency } from "../lib/call-dependency";
import { accountOf, limitsFor, type ApiKeyRecord as KeyRecord } from "../account/key-record";
import { accountKeysPage, MAX_KEYS_PAGE } from "../keys/account-key-pages";
import { keyOperation } from "./key-operation";
import { documentedParameters, strictQuery } from "../framework/operations/strict-query";
import { rfc3339ToUtc } from "../lib/date-time";

/**
 * A timeline page from TIMELINE + 1 rows, newest first: rows sharing the instant of the first not shown go to the next
 * page whole, so none is skipped.
 */
function timelinePage<Row extends { at: string }>(rows: readonly Row[]): { rows: Row[]; next: string | null } {
  if (rows.length <= TIMELINE) return { rows: [...rows], next: null };
  const next = rows[TIMELINE]!.at;
  const shown = rows.slice(0, TIMELINE).filter((row) => row.at > next);
  return shown.length > 0 ? { rows: shown, next } : { rows: rows.slice(0, TIMELINE), next };
}

const TIMELINE_PARAMETERS = {
  before: "an RFC 3339 date-time: the timeline's rows at or before it (the answer's timelineNext)",
} as const;
import { keyState } from "./admin-key";
import { leakedMakerOf, leaksOf, type LeakOfKey } from "../keys/leaked-key-audit";

/** Timeline entries an account's page shows: the newest, keys' and endpoints' together. */
const TIMELINE = 200;

const TimelineEntry = z.object({
  at: z.string(),
  subject: z.string().describe("The key or webhook endpoint acted on"),
  operation: z
    .string()
    .describe(
      "create, update, rotate, revoke, unban, console_link, console_sign_in, console_sign_out; an endpoint's create, " +
        "update, disable, enable, ...",
    ),
  actor: z
    .string()
    .describe("Who: an operator's name, `cli:<user>`, or `key:<id>` for the account's own keys and console sessions"),
  changes: z.record(z.string(), z.unknown()),
  outcome: z
    .string()
    .nullable()
    .describe("`unknown` for an action that failed after its row was written (it may have taken effect)"),
});

/** The account's first keys by id, with their state, MAX_KEYS_PAGE at most; whether more are listed. */
async function keysOfAccount(accounts: Env["ACCOUNTS"], account: string, now: number) {
  const page = await accountKeysPage(accounts, account, { limit: MAX_KEYS_PAGE });
  const keys = page.keys
    .map((record) => ({ ...record, state: keyState(record, now) }))
    .sort((a, b) => b.createdAt.localeCompare(a.createdAt));
  return { keys, more: page.more };
}

const recordJson = (
  {
    id,
    name,
    start,
    plan,
    scopes,
    createdAt,
    expiresAt,
    revokedAt,
    revokedReason,
    limits,
    state,
  }: KeyRecord & { state: string },
  leaks: ReadonlyMap<string, LeakOfKey>,
) => ({
  id,
  name,
  start,
  plan,
  scopes,
  limits: limits ?? null,
  state,
  createdAt,
  expiresAt: expiresAt ?? null,
  revokedAt: revokedAt ?? null,
  revokedReason: revokedReason ?? null,
  leak: leaks.get(id) ?? null,
  madeByLeakedKey: leakedMakerOf(id, leaks),
});

/**
 * GET /admin/keys/{keyId}/budget: an account's page for operators, its keys and its audit timeline (both audit tables
 * in one query, by the account's index, newest page of each).
 */
export const getBudget = keyOperation(
  {
    operationId: "getBudget",
    method: "get",
    action: "budget",
    summary: "A key's account: its keys and audit timeline",
    description:
      "The account the key spends: every key of it with its state, and its audit timeline a page of 200 at a time, " +
      "newest first (before=, the answer's " +
      "timelineNext, for the next), its keys' and webhook endpoints' rows with who acted (its endpoints: GET " +
      "/admin/webhook-endpoints?budget=).",
    queryParameters: documentedParameters(TIMELINE_PARAMETERS, { before: { type: "string", format: "date-time" } }),
    errors: ["not_found", "invalid_query"],
    body: z.object({
      budget: z.string(),
      keys: z.array(z.object({}).loose()),
      moreKeys: z.boolean().describe("More keys are listed than the page shows (the first 100 by id)"),
      limitsInForce: z.object({ perMinute: z.number(), perDay: z.number() }),
      timeline: z.array(TimelineEntry),
      timelineNext: z.string().nullable(),
    }),
  },
  async (c, { record }) => {
    const account = accountOf(record);
    const db = c.env.DB;
    const { keys, more } = await keysOfAccount(c.env.ACCOUNTS, account, Date.now());
    // A key made a moment ago elsewhere may not be listed yet; the one asked for always is.
    if (!keys.some(({ id }) => id === record.id)) keys.unshift({ ...record, state: keyState(record, Date.now()) });
    const ids = JSON.stringify(keys.map(({ id }) => id));
    const leaks = await leaksOf(db, keys);
    const { value, invalid } = strictQuery(new URL(c.req.url).searchParams, TIMELINE_PARAMETERS);
    const beforeText = value("before");
    const through = beforeText === undefined ? "9999-12-31T23:59:59.999Z" : rfc3339ToUtc(beforeText);
    if (through === undefined) throw invalid("before", beforeText!);
    const timeline = await callDependency("D1", () =>
      db
        .prepare(
          `SELECT at, subject, operation, actor, changes, outcome FROM (
               SELECT at, key_id AS subject, operation, actor, changes, outcome FROM key_events
                WHERE key_id IN (SELECT value FROM json_each(?1)) AND at <= ?4
               UNION ALL
               SELECT * FROM (SELECT at, endpoint_id, operation, actor, changes, outcome FROM webhook_endpoint_events
                WHERE budget = ?2 AND at <= ?4 ORDER BY at DESC LIMIT ?3)
             ) ORDER BY at DESC LIMIT ?3`,
        )
        .bind(ids, account, TIMELINE + 1, through)
        .all<{
          at: string;
          subject: string;
          operation: string;
          actor: string;
          changes: string;
          outcome: string | null;
        }>(),
    );
    const page = timelinePage(timeline.results);
    return jsonBody(
      c,
      {
        budget: account,
        keys: keys.map((key) => recordJson(key, leaks)),
        moreKeys: more,
        /** What the account counts by now: its keys' own limits, or their plan's. */
        limitsInForce: limitsFor(record),
        timeline: page.rows.map((row) => ({ ...row, changes: JSON.parse(row.changes) as Record<string, unknown> })),
        timelineNext: page.next,
      },
      200,
      { "Cache-Control": "no-store" },
    );
  },
);
