import type { Context, Hono } from "hono";
import { z } from "zod";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { DELETE_KEY_EVENT, INSERT_KEY_EVENT, keyEventValues, withAuditRow, type KeyOperation } from "../keys/audit";
import { findApiKeyById } from "../keys/lookup";
import { Limits, budgetOf, type ApiKeyRecord } from "../keys/schemas";
import type { Usage } from "../limiter/policy";
import { callDependency } from "../lib/dependency";
import { requireOperator } from "./auth";

/** Where the operator API lives: outside /v1, never in the public document (README, "Operator API"). */
export const OPERATOR_PREFIX = "/admin";

/** New limits, and the stamp `keys update` wrote into the records with them (absent: now). */
const LimitsUpdate = Limits.extend({ setAt: z.iso.datetime({ offset: true }).optional() });

async function keyOf(c: Context<AppEnv>): Promise<ApiKeyRecord> {
  const keyId = c.req.param("keyId") ?? "";
  const record = await findApiKeyById(c.env.API_KEYS, keyId);
  if (!record) throw new ApiError("not_found", `No key ${keyId}.`);
  return record;
}

const limiterOf = (c: Context<AppEnv>, record: ApiKeyRecord) => c.env.RATE_LIMITER.getByName(budgetOf(record));

/**
 * Does one operator action on a key's budget with its audit row (the
 * operator's name as who did it): both happen or neither does (README,
 * "Operator API").
 */
async function audited(
  c: Context<AppEnv>,
  record: ApiKeyRecord,
  operation: KeyOperation,
  changes: Record<string, unknown>,
  action: () => Promise<Usage>,
): Promise<Response> {
  const db = c.env.DB;
  const event = { at: new Date().toISOString(), operation, keyId: record.id, changes: { ...changes, budget: budgetOf(record) }, actor: c.get("operator") ?? "operator" };
  const usage = await withAuditRow(
    async () => (await callDependency("D1", () => db.prepare(INSERT_KEY_EVENT).bind(...keyEventValues(event)).first<number>("id")))!,
    (rowId) => callDependency("D1", () => db.prepare(DELETE_KEY_EVENT).bind(rowId).run()),
    () => callDependency("rate limiter", action),
  );
  return c.json({ keyId: record.id, budget: budgetOf(record), usage });
}

/**
 * The operator API: a key's live usage, and the actions that reach every
 * isolate through the key's Durable Object at its next call (within a lease's
 * length, 5 s), sooner than KV spreads a change: unban, limits, revocation.
 */
export function mountOperatorApi(app: Hono<AppEnv>): void {
  const keys = `${OPERATOR_PREFIX}/keys/:keyId`;
  app.use(`${OPERATOR_PREFIX}/*`, requireOperator());
  app.get(`${keys}/usage`, async (c) => {
    const record = await keyOf(c);
    return c.json({ keyId: record.id, budget: budgetOf(record), usage: await limiterOf(c, record).usage() });
  });
  app.post(`${keys}/unban`, async (c) => {
    const record = await keyOf(c);
    return audited(c, record, "unban", {}, () => limiterOf(c, record).unban());
  });
  app.post(`${keys}/limits`, async (c) => {
    const record = await keyOf(c);
    const update = LimitsUpdate.safeParse(await c.req.json().catch(() => undefined));
    if (!update.success) {
      throw new ApiError("invalid_limits", 'Send {"perMinute": N, "perDay": N}, both positive whole numbers, and optionally "setAt", an RFC 3339 instant.');
    }
    const { setAt, ...limits } = update.data;
    const stamp = setAt === undefined ? Date.now() : Date.parse(setAt);
    return audited(c, record, "update", { limits, limitsSetAt: new Date(stamp).toISOString() }, () => limiterOf(c, record).updateLimits(limits, stamp));
  });
  app.post(`${keys}/revoke`, async (c) => {
    const record = await keyOf(c);
    return audited(c, record, "revoke", {}, () => limiterOf(c, record).revoke(record.id));
  });
}
