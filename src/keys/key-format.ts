/**
 * The shape of an API key (docs/api.md#key-format): `so_live_` or `so_test_`, 32 random base62 characters, then the
 * CRC-32 of all that in 6 base62 characters, so a scanner, and this service before any read, tells a real key from a
 * lookalike.
 */

export const BASE62 = "0123456789ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz";
/** How many random characters follow the prefix. */
export const KEY_RANDOM_LENGTH = 32;
/** Base62 digits of a CRC-32: 62^5 < 2^32 <= 62^6. */
export const KEY_CHECKSUM_LENGTH = 6;

/** What secret scanners are given: the prefix, the random part and its checksum. */
export const KEY_PATTERN_SOURCE = `so_(live|test)_[0-9A-Za-z]{${KEY_RANDOM_LENGTH + KEY_CHECKSUM_LENGTH}}`;
const CHECKSUMMED = new RegExp(`^${KEY_PATTERN_SOURCE}$`);

const CRC_TABLE = Uint32Array.from({ length: 256 }, (_, n) => {
  let c = n;
  for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1;
  return c;
});

/** CRC-32 (IEEE 802.3, as zlib and PNG compute it) of an ASCII string (a key is ASCII by its pattern). */
export function crc32(ascii: string): number {
  let crc = 0xffffffff;
  for (let i = 0; i < ascii.length; i++) crc = CRC_TABLE[(crc ^ ascii.charCodeAt(i)) & 0xff]! ^ (crc >>> 8);
  return (crc ^ 0xffffffff) >>> 0;
}

/** The checksum of a key's first part (prefix and random characters). */
export function keyChecksum(body: string): string {
  let value = crc32(body);
  let digits = "";
  do {
    digits = BASE62[value % 62] + digits;
    value = Math.floor(value / 62);
  } while (value > 0);
  return digits.padStart(KEY_CHECKSUM_LENGTH, "0");
}

/** Whether a string is a key of this service's shape whose checksum holds. */
export function isWellFormedKey(token: string): boolean {
  if (!CHECKSUMMED.test(token)) return false;
  const cut = token.length - KEY_CHECKSUM_LENGTH;
  return keyChecksum(token.slice(0, cut)) === token.slice(cut);
}

const BEARER = /^bearer(?: +(.*))?$/is;

type BearerToken = { kind: "missing" } | { kind: "malformed" } | { kind: "token"; token: string };

/** The token of `Authorization: Bearer <token>`, if any; the scheme is case-insensitive (RFC 9110). */
export function bearerToken(header: string | undefined): string | undefined {
  return (header === undefined ? undefined : BEARER.exec(header)?.[1]) || undefined;
}

/**
 * Reads an API key from `Authorization: Bearer <key>` strictly: in this service's key format, its checksum right, so
 * garbage and typos are refused without a read. Two Authorization headers arrive joined by ", " and fail.
 */
export function parseBearer(header: string | undefined): BearerToken {
  const token = bearerToken(header);
  if (!token) return { kind: "missing" };
  return isWellFormedKey(token) ? { kind: "token", token } : { kind: "malformed" };
}
