import { z } from "zod";
import { jsonBody } from "../framework/counted-body";
import { callDependency } from "../lib/dependency";
import { ApiKeyRecord, budgetOf, type ApiKeyRecord as KeyRecord } from "../keys/api-key-record";
import { budgetPrefix, idName, type KeySummary } from "../keys/layout";
import { keyOperation } from "./key-operation";
import { keyState } from "./search-keys";

/** Timeline entries a budget's page shows: the newest, keys' and endpoints' together. */
const TIMELINE = 200;

const TimelineEntry = z.object({
  at: z.string(),
  subject: z.string().describe("The key or webhook endpoint acted on"),
  operation: z.string().describe("create, update, rotate, revoke, unban, console_link, console_sign_in, console_sign_out; an endpoint's create, update, disable, enable, ..."),
  actor: z.string().describe("Who: an operator's name, `cli:<user>`, or `key:<id>` for the budget's own keys and console sessions"),
  changes: z.record(z.string(), z.unknown()),
  outcome: z.string().nullable().describe("`unknown` for an action that failed after its row was written (it may have taken effect)"),
});

async function keysOfBudget(kv: KVNamespace, budget: string, now: number) {
  const prefix = budgetPrefix(budget);
  const listed = await callDependency("KV", () => kv.list({ prefix }));
  const keys = await Promise.all(
    listed.keys.map(async ({ name }) => {
      const id = name.slice(prefix.length);
      const summary = (await callDependency("KV", () => kv.getWithMetadata<KeySummary>(idName(id)))).metadata;
      const parsed = ApiKeyRecord.safeParse({ id, ...summary });
      return parsed.success ? [{ ...parsed.data, state: keyState(parsed.data, now) }] : [];
    }),
  );
  return keys.flat().sort((a, b) => b.createdAt.localeCompare(a.createdAt));
}

const recordJson = ({ id, name, start, plan, scopes, createdAt, expiresAt, revokedAt, limits, state }: KeyRecord & { state: string }) => ({
  id,
  name,
  start: start ?? null,
  plan,
  scopes: scopes ?? null,
  limits: limits ?? null,
  state,
  createdAt,
  expiresAt: expiresAt ?? null,
  revokedAt: revokedAt ?? null,
});

/**
 * GET /admin/keys/{keyId}/budget: a budget's page for operators: its keys
 * and its audit timeline, every key operation, console sign-in and endpoint
 * action, with who did it. The timeline reads both audit tables in one
 * query, the endpoints' by the budget they belong or belonged to.
 */
export const getBudget = keyOperation(
  {
    operationId: "getBudget",
    method: "get",
    action: "budget",
    summary: "A key's budget: its keys and audit timeline",
    description: "The budget the key spends: every key of it with its state, and the newest 200 audit rows of its keys and webhook endpoints, with who acted (its endpoints: GET /admin/webhook-endpoints?budget=).",
    body: z.object({ budget: z.string(), keys: z.array(z.object({}).loose()), timeline: z.array(TimelineEntry) }),
  },
  async (c, { record }) => {
    const budget = budgetOf(record);
    const db = c.env.DB;
    const keys = await keysOfBudget(c.env.API_KEYS, budget, Date.now());
    // A key made a moment ago elsewhere may not be listed yet; the one asked for always is.
    if (!keys.some(({ id }) => id === record.id)) keys.unshift({ ...record, state: keyState(record, Date.now()) });
    const ids = JSON.stringify(keys.map(({ id }) => id));
    const timeline = await callDependency("D1", () =>
        db
          .prepare(
            `SELECT at, subject, operation, actor, changes, outcome FROM (
               SELECT at, key_id AS subject, operation, actor, changes, outcome FROM key_events WHERE key_id IN (SELECT value FROM json_each(?1))
               UNION ALL
               SELECT at, endpoint_id, operation, actor, changes, outcome FROM webhook_endpoint_events
                WHERE endpoint_id IN (SELECT id FROM webhook_endpoints WHERE budget = ?2) OR json_extract(changes, '$.budget') = ?2
             ) ORDER BY at DESC LIMIT ?3`,
          )
          .bind(ids, budget, TIMELINE)
          .all<{ at: string; subject: string; operation: string; actor: string; changes: string; outcome: string | null }>(),
    );
    return jsonBody(
      c,
      {
        budget,
        keys: keys.map(recordJson),
        timeline: timeline.results.map((row) => ({ ...row, changes: JSON.parse(row.changes) as Record<string, unknown> })),
      },
      200,
      { "Cache-Control": "no-store" },
    );
  },
);
