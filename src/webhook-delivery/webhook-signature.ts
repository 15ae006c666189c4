/**
 * Standard Webhooks signatures over `<webhook-id>.<webhook-timestamp>.<body>`: HMAC-SHA256 (`v1,`) or Ed25519 (`v1a,`),
 * one per secret during a rotation, space-separated.
 */
import { base64 } from "../lib/base64";
import { SIGNING_KEY_PREFIX, secretBytes, signingPrivateKey } from "./webhook-secrets";

export async function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): Promise<string> {
  const signed = new TextEncoder().encode(`${id}.${timestampSeconds}.${body}`);
  if (secret.startsWith(SIGNING_KEY_PREFIX)) {
    const signature = await crypto.subtle.sign({ name: "Ed25519" }, await signingPrivateKey(secret), signed);
    return `v1a,${base64(new Uint8Array(signature))}`;
  }
  const key = await crypto.subtle.importKey("raw", secretBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = await crypto.subtle.sign("HMAC", key, signed);
  return `v1,${base64(new Uint8Array(mac))}`;
}

/** The headers of one delivery attempt, signed with each of the endpoint's live secrets (the newest first). */
export async function webhookHeaders(
  secrets: readonly string[],
  id: string,
  timestampSeconds: number,
  body: string,
): Promise<Record<string, string>> {
  const signatures = await Promise.all(secrets.map((secret) => signWebhook(secret, id, timestampSeconds, body)));
  return {
    "Content-Type": "application/json",
    "webhook-id": id,
    "webhook-timestamp": String(timestampSeconds),
    "webhook-signature": signatures.join(" "),
  };
}
