import { z } from "zod";
import { defineOperation } from "../framework/operations/define-operation";
import { readOptionalJsonBody } from "../framework/operations/read-json-body";
import { jsonBody } from "../framework/counted-body";
import { ApiError } from "../framework/api-error";
import { accountOf, KeyIdParams } from "../account/key-record";
import { findKeyById } from "../keys/lookup";
import { RevocationReason, revokeKey } from "./key-revocation";

const RevokeBody = z.strictObject({
  reason: RevocationReason.default("retired"),
  /** Where the key was found, for a leak reported from elsewhere than GitHub's scanning (a log, a paste). */
  foundAt: z.string().max(2_048).optional(),
});

/** POST /admin/keys/{keyId}/revoke: any key revoked for good in its account. Audited. */
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
    "Revokes the key for good in its account: every isolate refuses it from its next ask (within 5 s), without " +
    "counting it; with reason leaked (and where it was found), every webhook endpoint it made or last aimed is " +
    "disabled (docs/api.md#what-a-leak-ends); audited.",
  params: {
    schema: KeyIdParams,
    invalid: { code: "not_found", message: "No such key: key ids look like key_0123456789abcdef." },
  },
  requestBody: { description: "Why (optional: retired), and where it was found", schema: RevokeBody },
  responses: {
    200: {
      description: "The account's usage, and what a leak ended",
      body: z.object({ keyId: z.string(), budget: z.string(), usage: z.object({}).loose() }).loose(),
    },
  },
  errors: ["not_found", "invalid_body", "unsupported_media_type", "body_too_large"],
  async handle(c, { keyId }) {
    const { reason, foundAt } = await readOptionalJsonBody(c, RevokeBody);
    const record = await findKeyById(c.env, keyId);
    if (!record) throw new ApiError("not_found", `No key ${keyId}.`);
    const revoked = await revokeKey(c, record, {
      reason,
      actor: c.get("operatorActor") ?? "operator",
      auditRepeat: true,
      ...(foundAt && { found: { url: foundAt } }),
    });
    return jsonBody(c, {
      keyId,
      budget: accountOf(record),
      usage: revoked.usage,
      reason: revoked.reason,
      ...(revoked.leak && { leak: revoked.leak }),
    });
  },
});
