/**
 * Webhook signing secrets (docs/operations.md#webhooks). A secret is
 * `whsec_` and the base64 of 32 random bytes, shown to its owner once. D1
 * keeps it sealed with AES-GCM under a key derived from the Workers secret
 * WEBHOOK_SECRETS_KEY, bound to its endpoint's id (the additional data), so
 * a database copy alone never yields a secret, and a sealed secret moved to
 * another endpoint does not open.
 */
import { base64, fromBase64 } from "../lib/base64";
import { openText, sealText } from "../lib/sealing";

const PREFIX = "whsec_";

/**
 * The Workers secret secrets are sealed with; a deployment without it is misconfigured (docs/operations.md#webhooks).
 */
export function sealingKeyOf(env: Env): string {
  if (!env.WEBHOOK_SECRETS_KEY)
    throw new Error("WEBHOOK_SECRETS_KEY is not set: webhook secrets cannot be sealed or opened");
  return env.WEBHOOK_SECRETS_KEY;
}

/** A new secret, as its owner sees it once. */
export const newWebhookSecret = () => `${PREFIX}${base64(crypto.getRandomValues(new Uint8Array(32)))}`;

/** The bytes a secret signs with (Standard Webhooks: the base64 after the prefix, decoded). */
export const secretBytes = (secret: string) => fromBase64(secret.slice(PREFIX.length));

// The purpose names the key: the same Workers secret seals nothing else under it.
const PURPOSE = "store-orders webhook secrets 1";

/** `<iv>.<ciphertext>`, each base64, bound to the endpoint's id. */
export const sealSecret = (keyMaterial: string, endpointId: string, secret: string): Promise<string> =>
  sealText(PURPOSE, keyMaterial, endpointId, secret);

/** The secret; throws when the key or the endpoint is not the one it was sealed with. */
export const openSecret = (keyMaterial: string, endpointId: string, sealed: string): Promise<string> =>
  openText(PURPOSE, keyMaterial, endpointId, sealed);

/**
 * The secrets that sign an endpoint's deliveries now: its own, and the one a
 * rotation replaced while the overlap lasts (left out, never fatal, should it
 * no longer open). Undefined when its own cannot be opened.
 */
export async function liveSecrets(
  keyMaterial: string,
  endpoint: {
    id: string;
    secret_sealed: string;
    previous_secret_sealed: string | null;
    previous_secret_until: string | null;
  },
  now: number,
): Promise<string[] | undefined> {
  const secret = await openSecret(keyMaterial, endpoint.id, endpoint.secret_sealed).catch(() => undefined);
  if (secret === undefined) return undefined;
  const overlapping =
    endpoint.previous_secret_sealed !== null &&
    endpoint.previous_secret_until !== null &&
    Date.parse(endpoint.previous_secret_until) > now;
  const previous = overlapping
    ? await openSecret(keyMaterial, endpoint.id, endpoint.previous_secret_sealed!).catch(() => undefined)
    : undefined;
  return previous === undefined ? [secret] : [secret, previous];
}
