import { parseWithExactIntegers } from "./exact-json.js";

/**
 * A webhook that does not verify: a missing header, a timestamp outside the
 * tolerance (a replay, or a clock far off), or no signature that matches.
 * Answer it with a 4xx and do not act on it.
 */
export class WebhookVerificationError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "WebhookVerificationError";
  }
}

export interface VerifyOptions {
  /** How far webhook-timestamp may be from now, in seconds. Default 300 (the Standard Webhooks recommendation). */
  toleranceSeconds?: number;
  /** Unix ms; for tests. */
  now?: number;
}

const header = (headers: Headers | Record<string, string | string[] | undefined>, name: string): string | undefined => {
  if (headers instanceof Headers) return headers.get(name) ?? undefined;
  const value = Object.entries(headers).find(([key]) => key.toLowerCase() === name)?.[1];
  return Array.isArray(value) ? value[0] : value;
};

const base64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));

/** Equal without telling how much matched by when it stops. */
function sameText(a: string, b: string): boolean {
  if (a.length !== b.length) return false;
  let difference = 0;
  for (let i = 0; i < a.length; i++) difference |= a.charCodeAt(i) ^ b.charCodeAt(i);
  return difference === 0;
}

/**
 * Checks a delivery as Standard Webhooks specifies (docs/api.md, "Receiving
 * webhooks"): the HMAC-SHA256 of `<webhook-id>.<webhook-timestamp>.<body>`
 * keyed with the secret's decoded bytes must be one of the `v1,` signatures,
 * and the timestamp within the tolerance. `body` is the raw text as it
 * arrived (parse it only after). Returns the event, its ids exact strings as
 * the client's orders are (a delivery signed before v2 wrote ids as strings
 * carried JSON integers: those are read exactly too); throws
 * WebhookVerificationError otherwise.
 */
export async function verifyWebhook<Event = unknown>(
  secret: string,
  headers: Headers | Record<string, string | string[] | undefined>,
  body: string,
  options: VerifyOptions = {},
): Promise<Event> {
  const id = header(headers, "webhook-id");
  const timestamp = header(headers, "webhook-timestamp");
  const signatures = header(headers, "webhook-signature");
  if (!id || !timestamp || !signatures)
    throw new WebhookVerificationError("webhook-id, webhook-timestamp and webhook-signature are required");
  if (!/^[0-9]{1,12}$/.test(timestamp)) throw new WebhookVerificationError("webhook-timestamp is not Unix seconds");
  const now = (options.now ?? Date.now()) / 1000;
  if (Math.abs(now - Number(timestamp)) > (options.toleranceSeconds ?? 300))
    throw new WebhookVerificationError("webhook-timestamp is outside the tolerance");
  const keyBytes = Uint8Array.from(atob(secret.replace(/^whsec_/, "")), (char) => char.charCodeAt(0));
  const key = await crypto.subtle.importKey("raw", keyBytes, { name: "HMAC", hash: "SHA-256" }, false, ["sign"]);
  const signed = await crypto.subtle.sign("HMAC", key, new TextEncoder().encode(`${id}.${timestamp}.${body}`));
  const expected = `v1,${base64(new Uint8Array(signed))}`;
  if (!signatures.split(" ").some((signature) => sameText(signature, expected)))
    throw new WebhookVerificationError("no signature matches");
  return parseWithExactIntegers(body, new Set(["id", "petId"])) as Event;
}
