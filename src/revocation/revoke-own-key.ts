import { z } from "zod";
import { defineOperation } from "../framework/operations/define-operation";
import { readOptionalJsonBody } from "../framework/operations/read-json-body";
import { jsonBody } from "../framework/counted-body";
import { ApiError } from "../framework/api-error";
import { keyOfCaller } from "../keys/caller";
import { actsOnlyOnItself, answeringRefusals } from "../keys/key-refusal";
import { OperationNotTaken } from "../lib/audit-row";
import type { KeyRefusal } from "../account/key-rules";
import { accountOf } from "../account/key-record";
import { findKeyById } from "../keys/lookup";
import { KEY_PARAMS, OWN_KEYS, RevokedKey } from "../keys/own-keys/own-key-schemas";
import { RevocationReason, revokeKey } from "./key-revocation";

export const RevokeOwnKey = z
  .strictObject({ reason: RevocationReason.default("retired") })
  .meta({ id: "RevokeOwnKey" });

/** POST /v2/keys/{keyId}/revoke: a key of the caller's account revoked for good. Audited. */
export const revokeOwnKey = defineOperation({
  ...OWN_KEYS,
  operationId: "revokeOwnKey",
  method: "post",
  path: "/keys/{keyId}/revoke",
  summary: "Revoke a key of the caller's account",
  description:
    "Revokes a key of the calling key's account for good, the calling key included: from the next call on " +
    "(within 5 s everywhere) it is refused, and a console session of it ends. With reason leaked, every " +
    "webhook endpoint it made or last aimed (URL, secret or types) is disabled, to be enabled again with " +
    "confirmUrl, and the keys it made by rotation are named " +
    "(docs/api.md#what-a-leak-ends). Revoking a revoked key answers as the first time did; a key revoked as " +
    "retired may be revoked again as leaked. A key that was rotated away, or expires, may revoke only itself " +
    "(403 key_acts_only_on_itself). Audited.",
  params: KEY_PARAMS,
  requestBody: { description: "Why (optional: retired)", schema: RevokeOwnKey },
  responses: { 200: { description: "The key, when it was revoked and why, and what a leak ended", body: RevokedKey } },
  errors: ["unsupported_media_type", "body_too_large", "invalid_body", "key_not_found", "key_acts_only_on_itself"],
  async handle(c, { keyId }) {
    const { reason } = await readOptionalJsonBody(c, RevokeOwnKey);
    const caller = keyOfCaller(c);
    const record = await findKeyById(c.env, keyId);
    if (!record || accountOf(record) !== accountOf(caller))
      throw new ApiError("key_not_found", `No key ${keyId} in this key's account.`);
    // Whether the caller may act on another key is the account's to say, as it holds the caller now.
    // The one refusal a revocation has: the asking key acts only on itself.
    const refused = (refusal: KeyRefusal) =>
      new OperationNotTaken(`the account refused: ${refusal.kind}`, {
        answer: actsOnlyOnItself("another key of its account"),
      });
    const asked = { reason, actor: `key:${caller.id}`, asker: { id: caller.id, refused } };
    const revoked = await answeringRefusals(revokeKey(c, record, asked));
    return jsonBody(c, {
      id: keyId,
      revokedAt: revoked.revokedAt,
      reason: revoked.reason,
      ...(revoked.leak && { leak: revoked.leak }),
    });
  },
});
