import { z } from "zod";
import { ApiError } from "../framework/api-error";
import { jsonBody } from "../framework/counted-body";
import { readJsonBody } from "../framework/operations/read-json-body";
import { callDependency } from "../lib/call-dependency";
import { Plan } from "../account/plans";
import { budgetOf, limitsFor, type ApiKeyRecord } from "../account/key-record";
import { addKeyEventChanges, auditedKeyOperation } from "../keys/audited-key-operation";
import { withChanges, withKnownEnd, writeBudgetFields } from "../keys/budget-records";
import { storeKeyRecord } from "../keys/kv-layout";
import { AdminKey, adminKeyOf, checkedExpiry, FutureInstant, LimitField, limitsAsked } from "./admin-key";
import { keyOperation, limiterOf } from "./key-operation";

const UpdateKey = z.strictObject({
  plan: Plan.optional().describe("The budget's plan: every key of the budget gets it"),
  perMinute: LimitField.optional().describe("With perDay: the budget's own limits"),
  perDay: LimitField.optional(),
  name: z.string().min(1).max(200).optional().describe("This key's name"),
  expiresAt: FutureInstant.optional().describe("This key's end"),
});

/**
 * PATCH /admin/keys/{keyId} (`npm run keys -- update`): a name or an expiry
 * changes the key named; a plan or limits change its budget, every live key
 * of it, and reach every isolate through the budget's object at its next call.
 * One audit row, naming every key reached.
 */
export const updateKey = keyOperation(
  {
    operationId: "updateKey",
    method: "patch",
    action: "",
    summary: "Change a key's name or expiry, or its budget's plan or limits",
    description:
      "A plan or limits apply to the budget (every live key of it) from every isolate's next call; a name or an " +
      "expiry to the key named. A revoked key is 404 key_not_found. Audited.",
    requestBody: { description: "What changes: at least one field", schema: UpdateKey },
    errors: [
      "not_found",
      "key_not_found",
      "invalid_body",
      "invalid_limits",
      "unsupported_media_type",
      "body_too_large",
      "service_unavailable",
    ],
    body: AdminKey.extend({ reached: z.array(z.string()).describe("The keys whose records changed") }),
  },
  async (c, { hash, record }) => {
    const asked = await readJsonBody(c, UpdateKey);
    if (Object.keys(asked).length === 0)
      throw new ApiError("invalid_body", "Send at least one of plan, perMinute and perDay, name, expiresAt.");
    const limiter = limiterOf(c, record);
    const standing = await callDependency("rate limiter", () => limiter.standing(record.id));
    if (standing.ended || record.revokedAt)
      throw new ApiError("key_not_found", `Key ${record.id} is revoked: issue a new key instead.`);
    // A key rotated away ends with its grace: only revoking it ends it sooner, and nothing makes it last longer.
    if ((standing.rotatedAway || record.rotatedTo !== undefined) && asked.expiresAt !== undefined)
      throw new ApiError(
        "invalid_body",
        `expiresAt: key ${record.id} was rotated away and ends with its grace. Revoke it to end it sooner.`,
      );
    const changes = changesOf(record, asked);
    const next = withChanges(withKnownEnd(record, standing), changes);
    const budgetChanged = changes.limitsSetAt !== undefined;
    // KV may still show a key rotated away elsewhere as it was: that record is not written back, lest its rotation go.
    const recordCurrent = !standing.rotatedAway || record.rotatedTo !== undefined;
    if (!recordCurrent && !budgetChanged)
      throw new ApiError(
        "service_unavailable",
        `Key ${record.id} was rotated a moment ago and its record has not reached here yet: try again in a minute.`,
        { "Retry-After": "60" },
      );
    const reached = recordCurrent ? [record.id] : [];
    await auditedKeyOperation(
      c.env.DB,
      {
        operation: "update",
        keyId: record.id,
        changes: { ...changes, budget: budgetOf(record) },
        actor: c.get("operator") ?? "operator",
      },
      async (rowId) => {
        if (recordCurrent) await storeKeyRecord(c.env.API_KEYS, hash, next);
        // The object decides at once what KV may show a minute late elsewhere: the key ends at its new end.
        if (changes.expiresAt)
          await callDependency("rate limiter", () => limiter.endKey(record.id, Date.parse(changes.expiresAt!)));
        if (!budgetChanged) return;
        const stamp = Date.parse(changes.limitsSetAt!);
        await callDependency("rate limiter", () => limiter.updateLimits(limitsFor(next), stamp));
        const { plan, limits, limitsSetAt } = next;
        reached.push(
          ...(await writeBudgetFields(c, budgetOf(record), { plan, limits, limitsSetAt: limitsSetAt! }, record.id)),
        );
        await addKeyEventChanges(c.env.DB, rowId, { reached });
      },
    );
    return jsonBody(c, { ...adminKeyOf(next), reached });
  },
);

/** The record's changes: a plan without limits drops the key's own, and new plan or limits are stamped now. */
function changesOf(record: ApiKeyRecord, asked: z.infer<typeof UpdateKey>): Partial<ApiKeyRecord> {
  const changes: Partial<ApiKeyRecord> = {};
  const plan = asked.plan ?? record.plan;
  const limits =
    asked.perMinute === undefined && asked.perDay === undefined
      ? undefined
      : limitsAsked(plan, asked.perMinute, asked.perDay);
  if (plan !== record.plan) {
    changes.plan = plan;
    if (!limits) {
      if (plan === "enterprise") throw new ApiError("invalid_limits", "An enterprise key needs perMinute and perDay.");
      if (record.limits) changes.limits = undefined;
    }
  }
  if (limits) changes.limits = limits;
  // One stamp for the budget's new limits: the object never lets an older record's limits win.
  if ("plan" in changes || "limits" in changes) changes.limitsSetAt = new Date().toISOString();
  if (asked.name !== undefined) changes.name = asked.name;
  const expiresAt = checkedExpiry(asked.expiresAt);
  if (expiresAt) changes.expiresAt = expiresAt;
  return changes;
}
