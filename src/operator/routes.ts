import type { Context, Hono } from "hono";
import type { AppEnv } from "../env";
import { ApiError } from "../errors";
import { findApiKeyById } from "../keys/lookup";
import { Limits, budgetOf, type ApiKeyRecord } from "../keys/schemas";
import { callDependency } from "../lib/dependency";
import { requireOperator } from "./auth";

/** Where the operator API lives: outside /v1, never in the public document (README, "Operator API"). */
export const OPERATOR_PREFIX = "/admin";

async function keyOf(c: Context<AppEnv>): Promise<ApiKeyRecord> {
  const keyId = c.req.param("keyId") ?? "";
  const record = await findApiKeyById(c.env.API_KEYS, keyId);
  if (!record) throw new ApiError("not_found", `No key ${keyId}.`);
  return record;
}

const limiterOf = (c: Context<AppEnv>, record: ApiKeyRecord) => c.env.RATE_LIMITER.getByName(budgetOf(record));

/** Appends to the audit, with the operator's name as who did it. */
async function audit(c: Context<AppEnv>, operation: "unban", keyId: string, changes: Record<string, unknown>): Promise<void> {
  await callDependency("D1", () =>
    c.env.DB.prepare("INSERT INTO key_events (at, operation, key_id, changes, actor) VALUES (?1, ?2, ?3, ?4, ?5)")
      .bind(new Date().toISOString(), operation, keyId, JSON.stringify(changes), c.get("operator") ?? "operator")
      .run(),
  );
}

/**
 * The operator API: a key's live usage, unban, and revocation through the
 * key's Durable Object, which every isolate hears of at its next call to it
 * (within a lease's length, 5 s), sooner than KV spreads a revocation.
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
    const usage = await limiterOf(c, record).unban();
    await audit(c, "unban", record.id, { budget: budgetOf(record) });
    return c.json({ keyId: record.id, budget: budgetOf(record), usage });
  });
  app.post(`${keys}/limits`, async (c) => {
    const record = await keyOf(c);
    const limits = Limits.safeParse(await c.req.json().catch(() => undefined));
    if (!limits.success) throw new ApiError("invalid_limits", "Send {\"perMinute\": N, \"perDay\": N}, both positive whole numbers.");
    return c.json({ keyId: record.id, budget: budgetOf(record), usage: await limiterOf(c, record).updateLimits(limits.data) });
  });
  app.post(`${keys}/revoke`, async (c) => {
    const record = await keyOf(c);
    return c.json({ keyId: record.id, budget: budgetOf(record), usage: await limiterOf(c, record).revoke(record.id) });
  });
}
