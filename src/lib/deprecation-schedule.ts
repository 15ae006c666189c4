export interface DeprecationSchedule {
  /** Unix milliseconds: when the operation was deprecated. */
  deprecatedAt: number;
  /** Unix milliseconds: from when it answers 410. */
  sunsetAt: number;
  /** Where people read about the deprecation and what to use instead: a page for people (RFC 9745), HTML. */
  link: string;
}

/** RFC 9745 `Deprecation`, RFC 8594 `Sunset`, and a `Link` rel="deprecation" to a page for people. */
export function deprecationHeaders(schedule: DeprecationSchedule): Record<string, string> {
  return {
    Deprecation: `@${Math.floor(schedule.deprecatedAt / 1000)}`,
    Sunset: new Date(schedule.sunsetAt).toUTCString(),
    Link: `<${schedule.link}>; rel="deprecation"; type="text/html"`,
  };
}

export function isSunset(schedule: DeprecationSchedule, now: number): boolean {
  return now >= schedule.sunsetAt;
}
