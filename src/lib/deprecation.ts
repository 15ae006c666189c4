export interface DeprecationSchedule {
  /** ISO 8601: when the operation was deprecated. */
  deprecatedAt: string;
  /** ISO 8601: from when it answers 410. */
  sunsetAt: string;
  /** Where people read about the deprecation and what to use instead. */
  link: string;
}

/**
 * RFC 9745 `Deprecation: @<unix seconds>`, RFC 8594 `Sunset: <IMF-fixdate>`
 * and a `Link` with rel="deprecation".
 */
export function deprecationHeaders(schedule: DeprecationSchedule): Record<string, string> {
  return {
    Deprecation: `@${Math.floor(parseDate(schedule.deprecatedAt) / 1000)}`,
    Sunset: new Date(parseDate(schedule.sunsetAt)).toUTCString(),
    Link: `<${schedule.link}>; rel="deprecation"`,
  };
}

export function isSunset(schedule: DeprecationSchedule, now: number): boolean {
  return now >= parseDate(schedule.sunsetAt);
}

function parseDate(iso: string): number {
  const time = Date.parse(iso);
  if (Number.isNaN(time)) throw new Error(`not an ISO 8601 date: ${iso}`);
  return time;
}
