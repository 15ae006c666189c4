import { defineOperation } from "../../framework/operations/define-operation";
import { readOptionalJsonBody } from "../../framework/operations/read-json-body";
import { jsonBody } from "../../framework/counted-body";
import { ApiError } from "../../framework/api-error";
import { keyOfCaller } from "../caller";
import { accountOf } from "../../account/key-record";
import { findKeyById } from "../lookup";
import { rotateKey } from "../rotate-key";
import { KEY_PARAMS, OWN_KEYS, RotatedKey, RotateOwnKey } from "./own-key-schemas";

/** POST /v2/keys/{keyId}/rotate: a key of the caller's account replaced; the old works through its grace. */
export const rotateOwnKey = defineOperation({
  ...OWN_KEYS,
  operationId: "rotateOwnKey",
  method: "post",
  path: "/keys/{keyId}/rotate",
  summary: "Rotate a key of the caller's account",
  description:
    "Makes a new key to replace a key of the calling key's account (usually the calling key itself): the " +
    "same account, plan, " +
    "limits, scopes, expiry, webhook endpoints and usage. The new key is shown this once; the old one keeps working " +
    "for the " +
    "grace period (a day unless asked, at most a week, 0 for none), then expires, and a console session of it ends " +
    "with it. " +
    "A key of another account, or one revoked or expired, is 404 key_not_found. A key that was rotated " +
    "away may rotate " +
    "no key, " +
    "itself included, and one made to expire only itself (403 key_acts_only_on_itself), so no rotation returns a key " +
    "that outlives the key that asked. With no grace the " +
    "old key is refused everywhere within 5 s. Audited, with the key that asked.",
  params: KEY_PARAMS,
  requestBody: { description: "The grace period (optional)", schema: RotateOwnKey },
  responses: { 201: { description: "The new key, shown once, and when the old one stops", body: RotatedKey } },
  errors: [
    "unsupported_media_type",
    "body_too_large",
    "invalid_body",
    "key_not_found",
    "key_acts_only_on_itself",
    "too_many_keys",
  ],
  async handle(c, { keyId }) {
    const { graceSeconds } = await readOptionalJsonBody(c, RotateOwnKey);
    const caller = keyOfCaller(c);
    const target = await findKeyById(c.env, keyId);
    if (!target || accountOf(target) !== accountOf(caller))
      throw new ApiError("key_not_found", `No key ${keyId} in this key's account.`);
    // The account refuses what the caller may not do; the new key is never logged or kept: this is its one showing.
    return jsonBody(c, await rotateKey(c, target, graceSeconds, `key:${caller.id}`, caller.id), 201);
  },
});
