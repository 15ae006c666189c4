/**
 * SHA-256 of a text or of bytes, as lowercase hex: whole (a key's hash, what KV stores it
 * under), or its first `bytes` bytes where a short, stable name is enough (an
 * ETag, a cursor's check: collisions are then only a matter of chance, and
 * nothing secret rests on them).
 */
export async function sha256Hex(text: string | Uint8Array<ArrayBuffer>, bytes = 32): Promise<string> {
  const data = typeof text === "string" ? new TextEncoder().encode(text) : text;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  let hex = "";
  for (const byte of digest.subarray(0, bytes)) hex += byte.toString(16).padStart(2, "0");
  return hex;
}
