import type { ApiKeyRecord } from "./schemas";

export type KeyPrefix = "so_live_" | "so_test_";

const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
// A strict subset of RFC 6750's b64token, so checking it checks both.
const API_KEY_FORMAT = /^so_(live|test)_[0-9A-Za-z]{32}$/;
const BEARER = /^bearer(?: +(.*))?$/is;

export type BearerToken =
  | { kind: "missing" }
  | { kind: "malformed" }
  | { kind: "token"; token: string };

/**
 * Reads `Authorization: Bearer <token>` strictly. The scheme is
 * case-insensitive (RFC 9110); a scheme with no token sent no key. The token
 * must be in this service's key format, so garbage is refused without a KV
 * read. Two Authorization headers arrive joined by ", " and so fail the format.
 */
export function parseBearer(header: string | undefined): BearerToken {
  const token = header === undefined ? undefined : BEARER.exec(header)?.[1];
  if (!token) return { kind: "missing" };
  return API_KEY_FORMAT.test(token) ? { kind: "token", token } : { kind: "malformed" };
}

export function randomBase62(length: number): string {
  // 62 does not divide 256: reject bytes >= 248 so every character is equally likely.
  let out = "";
  while (out.length < length) {
    for (const byte of crypto.getRandomValues(new Uint8Array(length * 2))) {
      if (byte < 248 && out.length < length) out += BASE62[byte % 62];
    }
  }
  return out;
}

export function generateApiKey(prefix: KeyPrefix): string {
  return prefix + randomBase62(32);
}

export function generateKeyId(): string {
  return "key_" + randomBase62(16);
}

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}

/** The KV name a key's record is stored under. */
export const recordName = (hash: string) => `key:${hash}`;
/** The KV name that leads from a key id back to the hash, for revoking by id. */
export const idName = (keyId: string) => `id:${keyId}`;

/** Summary kept as metadata on `id:` entries so listing keys is one KV list call. */
export type KeySummary = Omit<ApiKeyRecord, "id">;

export interface KvEntry {
  key: string;
  value: string;
  metadata?: KeySummary;
}

/** The two KV entries that make up one stored key. */
export function keyEntries(hash: string, record: ApiKeyRecord): KvEntry[] {
  const { id, ...summary } = record;
  return [
    { key: recordName(hash), value: JSON.stringify(record) },
    { key: idName(id), value: hash, metadata: summary },
  ];
}
