import { z } from "zod";
import { defineOperation } from "../framework/operations/define-operation";
import { readOptionalJsonBody } from "../framework/operations/read-json-body";
import { jsonBody } from "../framework/counted-body";
import { ApiError } from "../framework/api-error";
import { budgetOf, KeyIdParams } from "../account/key-record";
import { findApiKeyById } from "../keys/lookup";
import { RevocationReason, revokeKey } from "./key-revocation";

const RevokeBody = z.strictObject({
  reason: RevocationReason.default("retired"),
  /** Where the key was found, for a leak reported from elsewhere than GitHub's scanning (a log, a paste). */
  foundAt: z.string().max(2_048).optional(),
});

/**
 * POST /admin/keys/{keyId}/revoke (docs/operations.md#operator-api): any key
 * revoked for good, by an operator or `npm run keys -- revoke` (which writes
 * KV first and asks again here to tell the budget's object, and to end a
 * leak). Audited with the operator's name.
 */
export const revokeAnyKey = defineOperation({
  operator: true,
  tag: "Service",
  stability: "experimental",
  documented: false,
  operationId: "revokeKey",
  method: "post",
  path: "/keys/{keyId}/revoke",
  summary: "Revoke a key, for good, everywhere within a lease",
  description:
    "Writes the key's record revoked (KV, for good), then has the budget's object refuse the key from " +
    "every isolate's " +
    "next call, without counting it, " +
    "until KV has spread the record; with reason leaked (and where it was found), every webhook endpoint it made or " +
    "last aimed is disabled and its " +
    "console sessions end (docs/api.md#what-a-leak-ends); audited.",
  params: {
    schema: KeyIdParams,
    invalid: { code: "not_found", message: "No such key: key ids look like key_0123456789abcdef." },
  },
  requestBody: { description: "Why (optional: retired), and where it was found", schema: RevokeBody },
  responses: {
    200: {
      description: "The budget's usage, and what a leak ended",
      body: z.object({ keyId: z.string(), budget: z.string(), usage: z.object({}).loose() }).loose(),
    },
  },
  errors: ["not_found", "invalid_body", "unsupported_media_type", "body_too_large"],
  async handle(c, { keyId }) {
    const { reason, foundAt } = await readOptionalJsonBody(c, RevokeBody);
    const stored = await findApiKeyById(c.env.API_KEYS, keyId);
    if (!stored) throw new ApiError("not_found", `No key ${keyId}.`);
    const revoked = await revokeKey(c, stored, {
      reason,
      actor: c.get("operator") ?? "operator",
      auditRepeat: true,
      ...(foundAt && { found: { url: foundAt } }),
    });
    return jsonBody(c, {
      keyId,
      budget: budgetOf(stored.record),
      usage: revoked.usage,
      reason: revoked.reason,
      ...(revoked.leak && { leak: revoked.leak }),
    });
  },
});
