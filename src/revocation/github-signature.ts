/**
 * GitHub's signature on a secret scanning report: ECDSA P-256 SHA-256 over the raw body, DER in base64, by the key
 * named in `Github-Public-Key-Identifier`. WebCrypto wants the raw form, so the DER is read here, strictly: a lenient
 * reader is a way past a signature check.
 */
import { fromBase64 } from "../lib/base64";

const COORDINATE = 32;

/** A DER length at `at`: its value and where the content starts; short and long forms, never indefinite. */
function lengthAt(der: Uint8Array, at: number): { length: number; start: number } | undefined {
  const first = der[at];
  if (first === undefined) return undefined;
  if (first < 0x80) return { length: first, start: at + 1 };
  if (first !== 0x81) return undefined;
  const length = der[at + 1];
  // The long form only for lengths that need it (DER's shortest form).
  return length === undefined || length < 0x80 ? undefined : { length, start: at + 2 };
}

/** One DER INTEGER at `at` as 32 unsigned big-endian bytes, and where it ends; undefined when not one or too big. */
function integerAt(der: Uint8Array, at: number): { value: Uint8Array; end: number } | undefined {
  if (der[at] !== 0x02) return undefined;
  const head = lengthAt(der, at + 1);
  if (!head || head.length === 0 || head.start + head.length > der.length) return undefined;
  let bytes = der.subarray(head.start, head.start + head.length);
  // Negative numbers are no signature's; a leading zero only where the next byte would read as negative.
  if (bytes[0]! & 0x80) return undefined;
  if (bytes.length > 1 && bytes[0] === 0 && !(bytes[1]! & 0x80)) return undefined;
  if (bytes[0] === 0 && bytes.length > 1) bytes = bytes.subarray(1);
  if (bytes.length > COORDINATE) return undefined;
  const value = new Uint8Array(COORDINATE);
  value.set(bytes, COORDINATE - bytes.length);
  return { value, end: head.start + head.length };
}

/** An ECDSA signature's DER form (SEQUENCE of r and s) as WebCrypto's raw r‖s; undefined for anything else. */
export function derSignatureToRaw(der: Uint8Array): Uint8Array | undefined {
  if (der[0] !== 0x30) return undefined;
  const sequence = lengthAt(der, 1);
  if (!sequence || sequence.start + sequence.length !== der.length) return undefined;
  const r = integerAt(der, sequence.start);
  const s = r && integerAt(der, r.end);
  if (!r || !s || s.end !== der.length) return undefined;
  const raw = new Uint8Array(2 * COORDINATE);
  raw.set(r.value, 0);
  raw.set(s.value, COORDINATE);
  return raw;
}

const ECDSA_P256 = { name: "ECDSA", namedCurve: "P-256" } as const;

/** A public key as GitHub publishes it (PEM), for verifying; throws on anything but P-256. */
export function importGithubKey(pem: string): Promise<CryptoKey> {
  const base64 = pem.replace(/-----(BEGIN|END) PUBLIC KEY-----/g, "").replace(/\s+/g, "");
  return crypto.subtle.importKey("spki", fromBase64(base64), ECDSA_P256, false, ["verify"]);
}

/** Whether `signature` (base64 of DER) is `key`'s over exactly `body`. */
export async function verifyGithubSignature(key: CryptoKey, signature: string, body: Uint8Array): Promise<boolean> {
  let der: Uint8Array;
  try {
    der = fromBase64(signature);
  } catch {
    return false;
  }
  const raw = derSignatureToRaw(der);
  if (!raw) return false;
  return crypto.subtle.verify({ name: "ECDSA", hash: "SHA-256" }, key, raw, body);
}
