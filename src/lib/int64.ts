const CANONICAL_INTEGER = /^-?(0|[1-9][0-9]*)$/;
const INT64_MIN = -(2n ** 63n);
const INT64_MAX = 2n ** 63n - 1n;

/**
 * True for the canonical decimal spelling of a signed 64-bit integer. Ids stay
 * strings end to end because JavaScript numbers lose precision above 2^53.
 */
export function isCanonicalInt64(text: string): boolean {
  // 20 characters is "-9223372036854775808"; anything longer is out of range
  // and not worth a BigInt allocation.
  if (text.length > 20 || !CANONICAL_INTEGER.test(text)) return false;
  const value = BigInt(text);
  return value >= INT64_MIN && value <= INT64_MAX;
}
