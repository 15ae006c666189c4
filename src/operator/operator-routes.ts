import type { Context } from "hono";
import { z } from "zod";
import { defineOperation, type Operation } from "../framework/operations/define-operation";
import type { AppEnv } from "../framework/app-env";
import { ApiError, type ErrorCode } from "../framework/api-error";
import { DELETE_KEY_EVENT, INSERT_KEY_EVENT, MARK_KEY_EVENT_UNKNOWN, keyEventValues, withAuditRow, type KeyOperation } from "../keys/audit";
import { keyEntries } from "../keys/layout";
import { findApiKeyById } from "../keys/lookup";
import { Limits, budgetOf, type ApiKeyRecord } from "../keys/api-key-record";
import type { Usage } from "../limiter/policy";
import { callDependency } from "../lib/dependency";
import { webhookOperatorOperations } from "../webhooks/webhook-operator-operations";
import { eventSequenceOperations } from "../events/event-sequence-operations";
import { UsageHistory, usageHistoryResponse, usageQueryParameters } from "../usage/usage-operations";
import { jsonBody } from "../framework/counted-body";

/** Where the operator API lives: outside /v1, never in the public document (docs/operations.md#operator-api). */
export const OPERATOR_PREFIX = "/admin";

/** New limits, and the stamp `keys update` wrote into the records with them (absent: now). */
const LimitsUpdate = Limits.extend({ setAt: z.iso.datetime({ offset: true }).optional() });

interface StoredKeyRecord {
  hash: string;
  record: ApiKeyRecord;
}

async function keyOf(c: Context<AppEnv>, keyId: string): Promise<StoredKeyRecord> {
  const found = await findApiKeyById(c.env.API_KEYS, keyId);
  if (!found) throw new ApiError("not_found", `No key ${keyId}.`);
  return found;
}

/** Writes the key's record revoked (KV), as `npm run keys -- revoke` does: what every location reads once KV has spread it, for good. */
async function storeRevoked(kv: KVNamespace, { hash, record }: StoredKeyRecord, at: string): Promise<void> {
  for (const entry of keyEntries(hash, { ...record, revokedAt: at })) {
    await callDependency("KV", () => kv.put(entry.key, entry.value, entry.metadata && { metadata: entry.metadata }));
  }
}

const limiterOf = (c: Context<AppEnv>, record: ApiKeyRecord) => c.env.RATE_LIMITER.getByName(budgetOf(record));

/**
 * Does one operator action on a key's budget with its audit row (the
 * operator's name as who did it), the row first: an action that fails keeps
 * its row marked 'unknown' (it may have taken effect), and one whose row
 * cannot be written does not happen (docs/operations.md#operator-api).
 */
async function audited(
  c: Context<AppEnv>,
  record: ApiKeyRecord,
  operation: KeyOperation,
  changes: Record<string, unknown>,
  action: () => Promise<Usage>,
): Promise<Response> {
  const db = c.env.DB;
  const event = {
    id: crypto.randomUUID(),
    at: new Date().toISOString(),
    operation,
    keyId: record.id,
    changes: { ...changes, budget: budgetOf(record) },
    actor: c.get("operator") ?? "operator",
  };
  const usage = await withAuditRow(
    async () => (await callDependency("D1", () => db.prepare(INSERT_KEY_EVENT).bind(...keyEventValues(event)).first<number>("id")))!,
    {
      remove: (rowId) => callDependency("D1", () => db.prepare(DELETE_KEY_EVENT).bind(rowId).run()),
      markUnknown: (rowId) => callDependency("D1", () => db.prepare(MARK_KEY_EVENT_UNKNOWN).bind(rowId).run()),
    },
    action,
  );
  return jsonBody(c, { keyId: record.id, budget: budgetOf(record), usage });
}

const KeyIdParams = z.object({ keyId: z.string().regex(/^key_[0-9A-Za-z]{16}$/) });
const keyIdInvalid = { code: "not_found", message: "No such key: key ids look like key_0123456789abcdef." } as const;
const UsageBody = z.object({ keyId: z.string(), budget: z.string(), usage: z.object({}).loose() });

/** What every operator operation shares: the operator token, and no place in the public documents. */
const OPERATOR = { operator: true, tag: "Service", stability: "experimental", documented: false, errors: ["not_found"] } as const;

/**
 * The operator API (docs/operations.md#operator-api), under OPERATOR_PREFIX: a key's
 * live usage, and the actions that reach every isolate through the budget's
 * Durable Object at its next call (within a lease's length, 5 s), sooner than
 * KV spreads a change: unban, limits, revocation.
 */
/** An operation on a key's budget: the key from the path, then the action, audited (the operator API's shape). */
function keyOperation(
  spec: {
    operationId: string;
    method: "get" | "post";
    action: string;
    summary: string;
    description: string;
    errors?: readonly ErrorCode[];
    queryParameters?: typeof usageQueryParameters;
    body?: z.ZodType;
  },
  handle: (c: Context<AppEnv>, key: StoredKeyRecord) => Promise<Response>,
): Operation {
  return defineOperation({
    ...OPERATOR,
    ...(spec.errors && { errors: spec.errors }),
    ...(spec.queryParameters && { queryParameters: spec.queryParameters }),
    operationId: spec.operationId,
    method: spec.method,
    path: `/keys/{keyId}/${spec.action}`,
    summary: spec.summary,
    description: spec.description,
    responses: { 200: { description: "The budget's usage", body: spec.body ?? UsageBody } },
    params: { schema: KeyIdParams, invalid: keyIdInvalid },
    async handle(c, { keyId }) {
      return handle(c, await keyOf(c, keyId));
    },
  });
}

export const operatorOperations = [
  ...webhookOperatorOperations,
  ...eventSequenceOperations,
  keyOperation(
    { operationId: "getKeyUsage", method: "get", action: "usage", summary: "A key's budget as its object counts it now", description: "Both windows (grants included), the refusal streak, the ban's end, the budget's revoked keys." },
    async (c, { record }) => jsonBody(c, { keyId: record.id, budget: budgetOf(record), usage: await limiterOf(c, record).usage() }),
  ),
  keyOperation(
    {
      operationId: "getKeyUsageHistory",
      method: "get",
      action: "usage/history",
      summary: "A key's budget's usage history",
      description: "As GET /v2/usage answers the key itself: admitted and refused per minute, hour or day, exactly as the limiter decided.",
      errors: ["not_found", "invalid_query"],
      queryParameters: usageQueryParameters,
      body: UsageHistory,
    },
    (c, { record }) => usageHistoryResponse(c, budgetOf(record)),
  ),
  keyOperation(
    { operationId: "unbanKey", method: "post", action: "unban", summary: "End a ban now", description: "Ends the budget's ban and starts its streak over; audited with the operator's name." },
    (c, { record }) => audited(c, record, "unban", {}, () => callDependency("rate limiter", () => limiterOf(c, record).unban())),
  ),
  keyOperation(
    {
      operationId: "setBudgetLimits",
      method: "post",
      action: "limits",
      summary: "Set the budget's limits",
      description: "The budget's limits from every isolate's next call, stamped setAt (the stamp keys update wrote); audited.",
      errors: ["not_found", "invalid_limits"],
    },
    async (c, { record }) => {
      const update = LimitsUpdate.safeParse(await c.req.json().catch(() => undefined));
      if (!update.success) {
        throw new ApiError("invalid_limits", 'Send {"perMinute": N, "perDay": N}, both positive whole numbers, and optionally "setAt", an RFC 3339 instant.');
      }
      const { setAt, ...limits } = update.data;
      const stamp = setAt === undefined ? Date.now() : Date.parse(setAt);
      return audited(c, record, "update", { limits, limitsSetAt: new Date(stamp).toISOString() }, () =>
        callDependency("rate limiter", () => limiterOf(c, record).updateLimits(limits, stamp)),
      );
    },
  ),
  keyOperation(
    {
      operationId: "revokeKey",
      method: "post",
      action: "revoke",
      summary: "Revoke a key, for good, everywhere within a lease",
      description:
        "Writes the key's record revoked (KV, for good), then has the budget's object refuse the key from every isolate's next call, without counting it, until KV has spread the record; audited.",
    },
    (c, key) => {
      const at = key.record.revokedAt ?? new Date().toISOString();
      return audited(c, key.record, "revoke", { revokedAt: at }, async () => {
        if (!key.record.revokedAt) await storeRevoked(c.env.API_KEYS, key, at);
        return callDependency("rate limiter", () => limiterOf(c, key.record).revoke(key.record.id));
      });
    },
  ),
];
