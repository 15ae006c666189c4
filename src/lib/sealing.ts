/** AES-GCM sealing under a key per secret and purpose, bound to additional data: nothing opens as another. */
import { base64, fromBase64 } from "./base64";

const utf8 = (text: string) => new TextEncoder().encode(text);

async function sealingKey(purpose: string, keyMaterial: string): Promise<CryptoKey> {
  const digest = await crypto.subtle.digest("SHA-256", utf8(`${purpose}\n${keyMaterial}`));
  return crypto.subtle.importKey("raw", digest, "AES-GCM", false, ["encrypt", "decrypt"]);
}

export async function sealText(
  purpose: string,
  keyMaterial: string,
  additionalData: string,
  text: string,
): Promise<string> {
  const iv = crypto.getRandomValues(new Uint8Array(12));
  const sealed = await crypto.subtle.encrypt(
    { name: "AES-GCM", iv, additionalData: utf8(additionalData) },
    await sealingKey(purpose, keyMaterial),
    utf8(text),
  );
  return `${base64(iv)}.${base64(new Uint8Array(sealed))}`;
}

/** The text; throws when key, purpose or additional data differ, or it is no seal. */
export async function openText(
  purpose: string,
  keyMaterial: string,
  additionalData: string,
  sealed: string,
): Promise<string> {
  const [iv, ciphertext] = sealed.split(".");
  const opened = await crypto.subtle.decrypt(
    { name: "AES-GCM", iv: fromBase64(iv!), additionalData: utf8(additionalData) },
    await sealingKey(purpose, keyMaterial),
    fromBase64(ciphertext!),
  );
  return new TextDecoder().decode(opened);
}
