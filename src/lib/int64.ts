/** A canonical decimal integer: no sign but "-", no leading zeros. */
export const CANONICAL_INTEGER = /^-?(0|[1-9][0-9]*)$/;
const INT64_MAX_DIGITS = "9223372036854775807";
const INT64_MIN_DIGITS = "9223372036854775808";

/** True for the canonical decimal spelling of an int64, compared as text so checking a long list allocates nothing. */
export function isCanonicalInt64(text: string): boolean {
  // 20 characters is "-9223372036854775808"; anything longer is out of range.
  if (text.length > 20 || !CANONICAL_INTEGER.test(text)) return false;
  const negative = text.charCodeAt(0) === 45; // "-"
  const digits = negative ? text.length - 1 : text.length;
  if (digits < 19) return true;
  // Same length, so lexicographic order is numeric order.
  return (negative ? text.slice(1) : text) <= (negative ? INT64_MIN_DIGITS : INT64_MAX_DIGITS);
}

/** True for canonical decimal integers JavaScript numbers hold exactly (|n| <= 2^53 - 1). */
export function isCanonicalSafeInteger(text: string): boolean {
  return text.length <= 17 && CANONICAL_INTEGER.test(text) && Number.isSafeInteger(Number(text));
}
