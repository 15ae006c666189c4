import { defineOperation } from "../../framework/operations/define-operation";
import { jsonBody } from "../../framework/counted-body";
import { ApiError } from "../../framework/api-error";
import { callDependency } from "../../lib/dependency";
import { keyOfCaller } from "../require-api-key";
import { budgetOf } from "../api-key-record";
import { auditedKeyOperation } from "../audited-key-operation";
import { storeKeyRecord } from "../layout";
import { findApiKeyById } from "../lookup";
import { refuseActingOnAnother } from "./acting-key";
import { KEY_PARAMS, OWN_KEYS, RevokedKey } from "./own-key-schemas";

/**
 * POST /v2/keys/{keyId}/revoke: a key of the caller's budget revoked for
 * good, as the operator API revokes one (KV, then the budget's object
 * refuses it everywhere within a lease); the old key of a rotation, before
 * its grace ends. Audited.
 */
export const revokeOwnKey = defineOperation({
  ...OWN_KEYS,
  operationId: "revokeOwnKey",
  method: "post",
  path: "/keys/{keyId}/revoke",
  summary: "Revoke a key of the caller's budget",
  description:
    "Revokes a key of the calling key's budget for good, the calling key included: from the next call on (within 5 s " +
    "everywhere) it is refused, and a console session of it ends. Revoking a revoked key answers as the first time did. A key that " +
    "was rotated away, or expires, may revoke only itself (403 key_acts_only_on_itself). Audited.",
  params: KEY_PARAMS,
  responses: { 200: { description: "The key, and when it was revoked", body: RevokedKey } },
  errors: ["key_not_found", "key_acts_only_on_itself"],
  async handle(c, { keyId }) {
    const caller = keyOfCaller(c);
    await refuseActingOnAnother(c.env.API_KEYS, caller, keyId);
    const stored = await findApiKeyById(c.env.API_KEYS, keyId);
    if (!stored || budgetOf(stored.record) !== budgetOf(caller)) throw new ApiError("key_not_found", `No key ${keyId} in this key's budget.`);
    const { hash, record } = stored;
    const revokedAt = record.revokedAt ?? new Date().toISOString();
    if (!record.revokedAt) {
      await auditedKeyOperation(c.env.DB, { operation: "revoke", keyId, changes: { revokedAt, budget: budgetOf(record) }, actor: `key:${caller.id}` }, async () => {
        await storeKeyRecord(c.env.API_KEYS, hash, { ...record, revokedAt });
        const { revoked } = await callDependency("rate limiter", () => c.env.RATE_LIMITER.getByName(budgetOf(record)).revoke(keyId));
        c.set("revocation", { budget: budgetOf(record), revoked });
      });
    }
    return jsonBody(c, { id: keyId, revokedAt });
  },
});
