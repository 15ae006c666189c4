import { z } from "zod";
import { ApiError } from "../framework/api-error";
import { jsonBody } from "../framework/counted-body";
import { readJsonBody } from "../framework/operations/read-json-body";
import { callDependency } from "../lib/call-dependency";
import { Plan } from "../account/plans";
import { accountOf, type ApiKeyRecord } from "../account/key-record";
import { forgetKey } from "../account/account-stub";
import type { KeyUpdate } from "../account/key-rules";
import { addKeyEventChanges, auditedKeyOperation } from "../keys/audit";
import { answeringRefusals, refusedByAccount } from "../keys/key-refusal";
import { AdminKey, adminKeyOf, checkedExpiry, FutureInstant, LimitField, limitsAsked } from "./admin-key";
import { accountOfRecord, keyOperation } from "./key-operation";

const UpdateKey = z.strictObject({
  plan: Plan.optional().describe("The account's plan: every key of the account gets it"),
  perMinute: LimitField.optional().describe("With perDay: the account's own limits"),
  perDay: LimitField.optional(),
  name: z.string().min(1).max(200).optional().describe("This key's name"),
  expiresAt: FutureInstant.optional().describe("This key's end"),
});

/** PATCH /admin/keys/{keyId}: name and expiry change the key, plan and limits its account. Audited. */
export const updateKey = keyOperation(
  {
    operationId: "updateKey",
    method: "patch",
    action: "",
    summary: "Change a key's name or expiry, or its account's plan or limits",
    description:
      "A plan or limits apply to the account (every key of it) from every isolate's next call; a name or an " +
      "expiry to the key named. A revoked or expired key is 404 key_not_found. Audited.",
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
    body: AdminKey.extend({
      reached: z.array(z.string()).describe("The keys changed: the key named, or every live key of its account"),
    }),
  },
  async (c, { record }) => {
    const asked = await readJsonBody(c, UpdateKey);
    if (Object.keys(asked).length === 0)
      throw new ApiError("invalid_body", "Send at least one of plan, perMinute and perDay, name, expiresAt.");
    const update = updateOf(record, asked);
    const updated = await answeringRefusals(
      auditedKeyOperation(
        c.env.DB,
        {
          operation: "update",
          keyId: record.id,
          changes: { ...asked, budget: accountOf(record) },
          actor: c.get("operatorActor") ?? "operator",
        },
        async (rowId) => {
          const done = await callDependency("account", () => accountOfRecord(c, record).updateKey(record.id, update));
          if (done.kind !== "updated")
            throw refusedByAccount(done, record.id, `Key ${record.id} is revoked or expired: issue a new key instead.`);
          forgetKey(c, done.key);
          if (update.plan) await addKeyEventChanges(c.env.DB, rowId, { reached: done.reached });
          return done;
        },
      ),
    );
    return jsonBody(c, { ...adminKeyOf(updated.key), reached: updated.reached });
  },
);

/** The update asked: a plan without limits drops the account's own; an enterprise plan needs limits. */
function updateOf(record: ApiKeyRecord, asked: z.infer<typeof UpdateKey>): KeyUpdate {
  const update: KeyUpdate = {};
  const plan = asked.plan ?? record.plan;
  const limits =
    asked.perMinute === undefined && asked.perDay === undefined
      ? undefined
      : limitsAsked(plan, asked.perMinute, asked.perDay);
  if (limits) update.plan = { ...(asked.plan !== undefined && { plan: asked.plan }), limits };
  else if (plan !== record.plan) {
    if (plan === "enterprise") throw new ApiError("invalid_limits", "An enterprise key needs perMinute and perDay.");
    update.plan = { plan };
  }
  if (asked.name !== undefined) update.name = asked.name;
  const expiresAt = checkedExpiry(asked.expiresAt);
  if (expiresAt) update.expiresAt = expiresAt;
  return update;
}
