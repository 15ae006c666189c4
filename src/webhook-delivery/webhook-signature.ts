/**
 * Standard Webhooks signatures (https://www.standardwebhooks.com/): HMAC-SHA256
 * over `<webhook-id>.<webhook-timestamp>.<body>`, keyed with the secret's
 * decoded bytes, sent as `v1,<base64>` in `webhook-signature`; during a
 * secret's rotation one signature per secret, space-separated, so a receiver
 * holding either verifies it.
 */
import { base64 } from "../lib/base64";
import { secretBytes } from "./webhook-secrets";

export async function signWebhook(secret: string, id: string, timestampSeconds: number, body: string): Promise<string> {
  const key = await crypto.subtle.importKey("raw", secretBytes(secret), { name: "HMAC", hash: "SHA-256" }, false, [
    "sign",
  ]);
  const mac = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestampSeconds}.${body}`));
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
