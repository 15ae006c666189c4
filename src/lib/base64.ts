/** Base64 of bytes, and back (RFC 4648 §4). */
export const base64 = (bytes: Uint8Array) => btoa(String.fromCharCode(...bytes));
export const fromBase64 = (text: string) => Uint8Array.from(atob(text), (char) => char.charCodeAt(0));
/** Base64 made URL- and filename-safe, unpadded (RFC 4648 §5): for tokens and cursors that travel in URLs. */
export const urlSafe = (base64Text: string) => base64Text.replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
