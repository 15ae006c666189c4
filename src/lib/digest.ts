/** SHA-256 as lowercase hex: whole, or its first `bytes` where a short stable name is enough. */
export async function sha256Hex(text: string | Uint8Array<ArrayBuffer>, bytes = 32): Promise<string> {
  const data = typeof text === "string" ? new TextEncoder().encode(text) : text;
  const digest = new Uint8Array(await crypto.subtle.digest("SHA-256", data));
  let hex = "";
  for (const byte of digest.subarray(0, bytes)) hex += byte.toString(16).padStart(2, "0");
  return hex;
}
