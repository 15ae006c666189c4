/**
 * RFC 3339 `date-time` strictly: a real calendar day, no leap seconds (Dates cannot hold them), optional fraction, `Z`
 * or an offset, `T` and `Z` in either case. The migrations' triggers accept the same strings.
 */
const RFC3339 = /^(\d{4})-(\d{2})-(\d{2})[Tt](\d{2}):(\d{2}):(\d{2})(?:\.(\d+))?(?:[Zz]|([+-])(\d{2}):(\d{2}))$/;

/** The form this API writes: when its fields are a real instant it is already its own UTC form. */
const CANONICAL_UTC = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

/** The instant as `YYYY-MM-DDTHH:mm:ss.sssZ`, or undefined when `value` is not an RFC 3339 date-time. */
export function rfc3339ToUtc(value: string): string | undefined {
  // The list writes one per order, nearly always canonical: checked by digits, no Date built.
  if (CANONICAL_UTC.test(value)) {
    const year = twoDigits(value, 0) * 100 + twoDigits(value, 2);
    return isRealTime(
      year,
      twoDigits(value, 5),
      twoDigits(value, 8),
      twoDigits(value, 11),
      twoDigits(value, 14),
      twoDigits(value, 17),
    )
      ? value
      : undefined;
  }
  const match = RFC3339.exec(value);
  if (!match) return undefined;
  const [year, month, day, hour, minute, second] = match.slice(1, 7).map(Number) as [
    number,
    number,
    number,
    number,
    number,
    number,
  ];
  const offsetHours = Number(match[9] ?? 0);
  const offsetMinutes = Number(match[10] ?? 0);
  if (!isRealTime(year, month, day, hour, minute, second) || offsetHours > 23 || offsetMinutes > 59) return undefined;

  // Cut to the millisecond by its digits, as the SQL's ship_instant, so a listed date and a range agree.
  const millis = Number((match[7] ?? "").padEnd(3, "0").slice(0, 3));
  const offset = (match[8] === "-" ? -1 : 1) * (offsetHours * 60 + offsetMinutes);
  // Date.UTC would map years 0-99 to 1900-1999; the setters do not.
  const date = new Date(0);
  date.setUTCFullYear(year, month - 1, day);
  date.setUTCHours(hour, minute - offset, second, millis);
  const utc = date.toISOString();
  // An offset can carry 0000-01-01 or 9999-12-31 out of the four-digit years RFC 3339 allows.
  return /^\d{4}-/.test(utc) ? utc : undefined;
}

/** The number two digits at `start` spell. */
function twoDigits(value: string, start: number): number {
  return (value.charCodeAt(start) - 48) * 10 + value.charCodeAt(start + 1) - 48;
}

function isRealTime(year: number, month: number, day: number, hour: number, minute: number, second: number): boolean {
  return (
    month >= 1 &&
    month <= 12 &&
    day >= 1 &&
    day <= daysInMonth(year, month) &&
    hour <= 23 &&
    minute <= 59 &&
    second <= 59
  );
}

function daysInMonth(year: number, month: number): number {
  if (month === 2) return year % 4 === 0 && (year % 100 !== 0 || year % 400 === 0) ? 29 : 28;
  return month === 4 || month === 6 || month === 9 || month === 11 ? 30 : 31;
}
