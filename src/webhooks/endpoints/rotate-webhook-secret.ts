import { keyOfCaller } from "../../keys/caller";
import { defineOperation } from "../../framework/operations/define-operation";
import { readOptionalJsonBody } from "../../framework/operations/read-json-body";
import { jsonBody } from "../../framework/counted-body";
import { callDependency } from "../../lib/call-dependency";
import { newSigningKeyPair, newWebhookSecret, sealingKeyOf, sealSecret } from "../../webhook-delivery/webhook-secrets";
import { auditedUnlessRefused } from "./endpoint-audit";
import { RotatedWebhookSecret, RotateWebhookSecret } from "./webhook-endpoint-schemas";
import { accountOfCaller, ENDPOINT_PARAMS, notFound, WEBHOOKS } from "./webhook-endpoint-operation";
import { accountEndpoint, rotateEndpointSecret } from "../../webhook-delivery/endpoint-table";

/**
 * POST /v2/webhook-endpoints/{endpointId}/rotate-secret: a new secret, shown once; the old signs beside it for the
 * overlap.
 */
export const rotateWebhookSecret = defineOperation({
  ...WEBHOOKS,
  beyondItself: "webhook endpoints",
  operationId: "rotateWebhookSecret",
  method: "post",
  path: "/webhook-endpoints/{endpointId}/rotate-secret",
  summary: "Rotate a webhook endpoint's signing secret",
  description:
    "Makes a new signing secret, shown this once. For the overlap (a day unless asked, at most a week) " +
    "every delivery " +
    "carries a " +
    "signature with each secret, space-separated as Standard Webhooks specifies, so the receiver can change to the " +
    "new one at its " +
    "own pace; then only the new one signs. A rotation during an overlap keeps the secret from before it signing (a " +
    "retried " +
    "rotation never cuts the receiver off); an overlap of 0 ends every old secret at once. The body may be left out. " +
    "Audited " +
    "with the key that asked.",
  params: ENDPOINT_PARAMS,
  requestBody: { description: "How long the old secret signs too (optional)", schema: RotateWebhookSecret },
  responses: { 200: { description: "The new secret, and when the old one stops signing", body: RotatedWebhookSecret } },
  errors: [
    "unsupported_media_type",
    "body_too_large",
    "invalid_body",
    "webhook_endpoint_not_found",
    "key_acts_only_on_itself",
  ],
  async handle(c, { endpointId }) {
    const { overlapSeconds } = await readOptionalJsonBody(c, RotateWebhookSecret);
    const now = Date.now();
    const at = new Date(now).toISOString();
    const previousSecretExpiresAt = new Date(now + overlapSeconds * 1000).toISOString();
    // No overlap: no old secret signs at all (a leak), not even one an earlier overlap kept.
    const previousUntil = overlapSeconds === 0 ? null : previousSecretExpiresAt;
    // The endpoint keeps how it signs: an ed25519 one gets a new key pair, its owner the new public key.
    const endpoint = await callDependency("D1", () => accountEndpoint(c.env.DB, accountOfCaller(c), endpointId));
    if (!endpoint) throw notFound(endpointId);
    const pair = endpoint.public_key === null ? undefined : await newSigningKeyPair();
    const secret = pair?.signingKey ?? newWebhookSecret();
    const sealed = await sealSecret(sealingKeyOf(c.env), endpointId, secret);
    await auditedUnlessRefused(
      c,
      { endpointId, operation: "rotate_secret", changes: { previousSecretExpiresAt } },
      async () =>
        (await callDependency("D1", () =>
          rotateEndpointSecret(
            c.env.DB,
            accountOfCaller(c),
            endpointId,
            sealed,
            pair?.publicKey ?? null,
            { previousUntil, now: at },
            keyOfCaller(c).id,
          ),
        )) || notFound(endpointId),
    );
    return jsonBody(c, { ...(pair ? { publicKey: pair.publicKey } : { secret }), previousSecretExpiresAt });
  },
});
