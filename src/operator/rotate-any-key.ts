import { jsonBody } from "../framework/counted-body";
import { readOptionalJsonBody } from "../framework/operations/read-json-body";
import { RotatedKey, RotateOwnKey } from "../keys/own-keys/own-key-schemas";
import { rotateKey } from "../keys/rotate-key";
import { keyOperation } from "./key-operation";
import { NO_STORE } from "./named-operators/named-operator";

/** POST /admin/keys/{keyId}/rotate: any live key rotated as its owner would. Audited. */
export const rotateAnyKey = keyOperation(
  {
    operationId: "rotateAnyKey",
    method: "post",
    action: "rotate",
    summary: "Rotate a key",
    description:
      "A new key of the same account, plan, limits, scopes and expiry, shown this once; the old key acts only on " +
      "itself from every isolate's next call, and stops at the end of its grace (a day unless asked, 0 for none). A " +
      "key revoked or expired is 404 key_not_found. Audited.",
    requestBody: { description: "The grace period (optional)", schema: RotateOwnKey },
    errors: ["not_found", "key_not_found", "too_many_keys", "invalid_body", "unsupported_media_type", "body_too_large"],
    body: RotatedKey,
    status: 201,
  },
  async (c, { record }) => {
    const { graceSeconds } = await readOptionalJsonBody(c, RotateOwnKey);
    const rotated = await rotateKey(c, record, graceSeconds, c.get("operatorActor") ?? "operator");
    return jsonBody(c, rotated, 201, NO_STORE);
  },
);
