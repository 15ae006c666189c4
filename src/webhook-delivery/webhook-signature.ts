/**
 * Standard Webhooks signatures over `<webhook-id>.<webhook-timestamp>.<body>`: HMAC-SHA256 (`v1,`) or Ed25519 (`v1a,`),
 * one per secret during a rotation, space-separated.
 */
import { base64 } from "../lib/base64";
import { SIGNING_KEY_PREFIX, secretBytes, signingPrivateKey } from "./webhook-secrets";

/** A secret with its key imported once for the deliveries it signs: the import costs more than a signature. */
export interface Signer {
  readonly ed25519: boolean;
  readonly key: CryptoKey;
}

export async function signerOf(secret: string): Promise<Signer> {
  if (secret.startsWith(SIGNING_KEY_PREFIX)) return { ed25519: true, key: await signingPrivateKey(secret) };
  const key = await crypto.subtle.importKey("raw", secretBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  return { ed25519: false, key };
}

export const signersOf = (secrets: readonly string[]): Promise<Signer[]> => Promise.all(secrets.map(signerOf));

async function signWith(signer: Signer, signed: Uint8Array): Promise<string> {
  if (signer.ed25519) {
    const signature = await crypto.subtle.sign({ name: "Ed25519" }, signer.key, signed);
    return `v1a,${base64(new Uint8Array(signature))}`;
  }
  const mac = await crypto.subtle.sign("HMAC", signer.key, signed);
  return `v1,${base64(new Uint8Array(mac))}`;
}

const signedBytes = (id: string, timestampSeconds: number, body: string) =>
  new TextEncoder().encode(`${id}.${timestampSeconds}.${body}`);

export async function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): Promise<string> {
  return signWith(await signerOf(secret), signedBytes(id, timestampSeconds, body));
}

/** The headers of one delivery attempt, signed with each of the endpoint's live secrets (the newest first). */
export async function webhookHeaders(
  signers: readonly Signer[],
  id: string,
  timestampSeconds: number,
  body: string,
): Promise<Record<string, string>> {
  const signed = signedBytes(id, timestampSeconds, body);
  const signatures = await Promise.all(signers.map((signer) => signWith(signer, signed)));
  return {
    "Content-Type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signatures.join(" "),
  };
}
