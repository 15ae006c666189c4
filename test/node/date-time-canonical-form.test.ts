import { describe, expect, it } from "vitest";
import { rfc3339ToUtc } from "../../src/lib/date-time";

const pad = (value: number, width: number) => String(value).padStart(width, "0");

describe("rfc3339ToUtc on the form the API writes", () => {
  it("reads every field of a canonical UTC date-time as the general reading of the same instant does", () => {
    // The canonical form is checked digit by digit; the same fields with a "+00:00" offset go through the general
    // reading (a Date). Every month and day around the calendar's edges, in leap and common years and at the
    // ends of the four-digit years, with times inside and just outside a day.
    const times = ["00:00:00.000", "23:59:59.999", "24:00:00.000", "23:60:00.000", "23:59:60.000", "12:30:45.123"];
    let checked = 0;
    let real = 0;
    for (const year of [0, 1900, 2000, 2024, 2026, 9999]) {
      for (let month = 0; month <= 13; month++) {
        for (let day = 0; day <= 32; day++) {
          for (const time of times) {
            const canonical = `${pad(year, 4)}-${pad(month, 2)}-${pad(day, 2)}T${time}Z`;
            const general = rfc3339ToUtc(canonical.replace("Z", "+00:00"));
            expect(rfc3339ToUtc(canonical), canonical).toBe(general === undefined ? undefined : canonical);
            checked += 1;
            if (general !== undefined) real += 1;
          }
        }
      }
    }
    // Both kinds were met: real instants (the value itself) and impossible ones (undefined).
    expect(checked).toBe(6 * 14 * 33 * 6);
    expect(real).toBe(3 * (3 * 365 + 3 * 366)); // three real times of day; 0, 2000 and 2024 are leap years
  });

  it("answers a canonical instant with the value itself, as JavaScript writes it", () => {
    for (const value of ["0000-01-01T00:00:00.000Z", "2024-02-29T23:59:59.999Z", "9999-12-31T23:59:59.999Z"]) {
      expect(rfc3339ToUtc(value)).toBe(value);
      expect(new Date(value).toISOString()).toBe(value);
    }
    expect(rfc3339ToUtc("2026-02-29T00:00:00.000Z")).toBeUndefined();
    expect(rfc3339ToUtc("1900-02-29T00:00:00.000Z")).toBeUndefined();
  });
});
