import { describe, expect, it } from "vitest";
import { rateLimitHeaders, type WrittenHeadersByWindow } from "../../../src/account/rate-limit-headers";
import { decide, type LimiterState } from "../../../src/account/policy";
import type { Verdict } from "../../../src/account/protocol";

const ban = { threshold: 3, seconds: 100 };
const limits = { perMinute: 2, perDay: 5 };
const DAY = Date.UTC(2030, 0, 1) / 1000;
const ms = (seconds: number) => (DAY + seconds) * 1000;

/** The verdict of the last of requests at the given second offsets. */
function lastVerdict(times: number[]): Verdict {
  let state: LimiterState | undefined;
  let verdict: Verdict | undefined;
  for (const time of times) ({ state, verdict } = decide(state, limits, ban, ms(time)));
  return verdict!;
}

/**
 * A refusal the isolate answers itself from the object's last answer (lease-book.ts decideLocally): the same windows,
 * its own clock.
 */
const refusedLocally = (last: Verdict, seconds: number, retryAfter: number): Verdict => ({
  ...last,
  now: ms(seconds),
  retryAfter,
});

/** One isolate's memory of the headers it wrote (app/isolate-memory.ts). */
const written: WrittenHeadersByWindow = new WeakMap();

describe("rateLimitHeaders", () => {
  it("describes the reported window and both windows in the IETF fields", () => {
    expect(rateLimitHeaders(lastVerdict([10.5]), written)).toEqual({
      "X-RateLimit-Limit": "2",
      "X-RateLimit-Remaining": "1",
      "X-RateLimit-Reset": String(DAY + 60),
      "X-RateLimit-Resource": "minute",
      "RateLimit-Policy": '"minute";q=2;w=60, "day";q=5;w=86400',
      RateLimit: `"minute";r=1;t=50, "day";r=4;t=${86400 - 10}`,
    });
  });

  it("adds Retry-After to refusals and reports zero left until a ban ends", () => {
    expect(rateLimitHeaders(lastVerdict([0, 1, 2, 3, 4, 5, 30]), written)).toMatchObject({
      "X-RateLimit-Remaining": "0",
      "X-RateLimit-Reset": String(DAY + 105),
      "Retry-After": "75",
      RateLimit: '"minute";r=0;t=75, "day";r=0;t=75',
    });
  });

  it("writes a refusal's headers once for as long as every value in them stays the same", () => {
    const limited = lastVerdict([0, 1, 2]);
    expect(limited.outcome).toBe("limited");
    const first = rateLimitHeaders(refusedLocally(limited, 2.1, 58), written);
    // Later in the same whole second, from the same windows: the very same headers, not a copy.
    expect(rateLimitHeaders(refusedLocally(limited, 2.9, 58), written)).toBe(first);
    expect(first).toMatchObject({ "Retry-After": "58", RateLimit: `"minute";r=0;t=58, "day";r=3;t=${86400 - 2}` });
  });

  it("writes them again when any value changes: a second later, another wait, other windows", () => {
    const limited = lastVerdict([0, 1, 2]);
    const first = rateLimitHeaders(refusedLocally(limited, 2.5, 58), written);
    expect(rateLimitHeaders(refusedLocally(limited, 3.5, 57), written)).toMatchObject({
      "Retry-After": "57",
      RateLimit: `"minute";r=0;t=57, "day";r=3;t=${86400 - 3}`,
    });
    expect(rateLimitHeaders(refusedLocally(limited, 3.6, 56), written)).toMatchObject({ "Retry-After": "56" });
    // An equal answer from the object is a new state: its windows are its own.
    const again = { ...limited, minute: { ...limited.minute }, day: { ...limited.day, remaining: 1 } };
    expect(rateLimitHeaders(refusedLocally(again, 2.5, 58), written)).toMatchObject({
      RateLimit: `"minute";r=0;t=58, "day";r=1;t=${86400 - 2}`,
    });
    expect(rateLimitHeaders(refusedLocally(limited, 2.5, 58), written)).not.toBe(first);
  });

  it("builds an admission's headers every time: its remaining count changes with each request", () => {
    const admitted = lastVerdict([0]);
    expect(rateLimitHeaders(admitted, written)).not.toBe(rateLimitHeaders(admitted, written));
  });
});
