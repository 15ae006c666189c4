/**
 * Webhook signing secrets (docs/operations.md#webhooks): `whsec_` and 32 random bytes in base64, shown once. D1 keeps
 * each sealed with AES-GCM under WEBHOOK_SECRETS_KEY, bound to its endpoint's id, so a database copy yields no secret
 * and a sealed one moved elsewhere does not open.
 */
import { base64, fromBase64 } from "../lib/base64";
import { openText, sealText } from "../lib/sealing";

const PREFIX = "whsec_";

/** The secret signing secrets are sealed with; a deployment without it is misconfigured. */
export function sealingKeyOf(env: Env): string {
  if (!env.WEBHOOK_SECRETS_KEY)
    throw new Error("WEBHOOK_SECRETS_KEY is not set: webhook secrets cannot be sealed or opened");
  return env.WEBHOOK_SECRETS_KEY;
}

/** A new secret, as its owner sees it once. */
export const newWebhookSecret = () => `${PREFIX}${base64(crypto.getRandomValues(new Uint8Array(32)))}`;

/**
 * Standard Webhooks' asymmetric keys: `whsk_` and the Ed25519 seed and public key (as libsodium writes one), sealed and
 * never shown; `whpk_` and the public key, which its owner verifies with.
 */
export const SIGNING_KEY_PREFIX = "whsk_";
export const PUBLIC_KEY_PREFIX = "whpk_";
/** PKCS #8's wrapping of an Ed25519 seed (RFC 8410): these 16 bytes, then the 32 of the seed. */
const PKCS8_ED25519 = [0x30, 0x2e, 0x02, 0x01, 0x00, 0x30, 0x05, 0x06, 0x03, 0x2b, 0x65, 0x70, 0x04, 0x22, 0x04, 0x20];

/** A new Ed25519 key pair: the signing key to seal, the public key to show. */
export async function newSigningKeyPair(): Promise<{ signingKey: string; publicKey: string }> {
  const pair = (await crypto.subtle.generateKey({ name: "Ed25519" }, true, ["sign", "verify"])) as CryptoKeyPair;
  const pkcs8 = new Uint8Array((await crypto.subtle.exportKey("pkcs8", pair.privateKey)) as ArrayBuffer);
  if (pkcs8.length !== PKCS8_ED25519.length + 32 || PKCS8_ED25519.some((byte, i) => pkcs8[i] !== byte))
    throw new Error("the runtime's PKCS #8 export of an Ed25519 key is not RFC 8410's: no seed to keep");
  const publicBytes = new Uint8Array((await crypto.subtle.exportKey("raw", pair.publicKey)) as ArrayBuffer);
  const seedAndPublic = new Uint8Array(64);
  seedAndPublic.set(pkcs8.slice(PKCS8_ED25519.length), 0);
  seedAndPublic.set(publicBytes, 32);
  return {
    signingKey: `${SIGNING_KEY_PREFIX}${base64(seedAndPublic)}`,
    publicKey: `${PUBLIC_KEY_PREFIX}${base64(publicBytes)}`,
  };
}

/** The private key of a `whsk_` signing key, for WebCrypto. */
export function signingPrivateKey(signingKey: string): Promise<CryptoKey> {
  const seed = fromBase64(signingKey.slice(SIGNING_KEY_PREFIX.length)).slice(0, 32);
  const pkcs8 = new Uint8Array([...PKCS8_ED25519, ...seed]);
  return crypto.subtle.importKey("pkcs8", pkcs8, { name: "Ed25519" }, false, ["sign"]);
}

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
 * The secrets that sign now: the endpoint's own, and during an overlap the one it replaced (left out should it not
 * open). Undefined when its own does not open.
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
