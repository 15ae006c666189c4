/**
 * Where a key lives in KV (docs/operations.md#api-keys): its record under the SHA-256
 * of the key, and an entry that leads from its id back to that hash, for
 * revoking by id. The key itself is never stored.
 */
export const recordName = (hash: string) => `key:${hash}`;
export const idName = (keyId: string) => `id:${keyId}`;

export async function sha256Hex(text: string): Promise<string> {
  const digest = await crypto.subtle.digest("SHA-256", new TextEncoder().encode(text));
  return [...new Uint8Array(digest)].map((byte) => byte.toString(16).padStart(2, "0")).join("");
}
