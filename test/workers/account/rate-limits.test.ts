import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { storeTestKey } from "../../support/test-keys";
import { errorBodyOf } from "../../support/request";
import { at, onAFakeClock, send, setClock, statuses } from "../../support/limits-clock";

/** The limits as a caller meets them (docs/api.md#rate-limits): the windows, bans and plans, on a fake clock. */

onAFakeClock();

describe("per-minute limit on the free plan", () => {
  it("admits 60 requests in a minute and answers the 61st with 429 and the right headers", async () => {
    const { key } = await storeTestKey({ plan: "free" });
    setClock(15.2);
    const admitted = await send(key, 60);
    expect(statuses(admitted)).toEqual(Array(60).fill(200));
    expect(admitted[0].headers.get("X-RateLimit-Remaining")).toBe("59");
    expect(admitted[59].headers.get("X-RateLimit-Remaining")).toBe("0");

    const [refused] = await send(key, 1);
    expect(await errorBodyOf(refused)).toMatchObject({ code: "rate_limit_exceeded", status: 429 });
    const minuteEnd = String(at(60) / 1000);
    expect(Object.fromEntries(refused.headers)).toMatchObject({
      "retry-after": "45", // ceil(60 - 15.2)
      "x-ratelimit-limit": "60",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": minuteEnd,
      "x-ratelimit-resource": "minute",
      "ratelimit-policy": '"minute";q=60;w=60, "day";q=1000;w=86400',
      ratelimit: '"minute";r=0;t=45, "day";r=940;t=43185',
    });
  });
});

describe("windows", () => {
  it("resets the minute window at the UTC minute", async () => {
    const { key } = await storeTestKey({ plan: "free", limits: { perMinute: 2, perDay: 100 } });
    setClock(58);
    expect(statuses(await send(key, 3))).toEqual([200, 200, 429]);
    setClock(59.999);
    expect(statuses(await send(key, 1))).toEqual([429]);
    setClock(60);
    const [next] = await send(key, 1);
    expect(next.status).toBe(200);
    expect(next.headers.get("X-RateLimit-Reset")).toBe(String(at(120) / 1000));
  });

  it("lets the day quota bind across minutes, and resets it at UTC midnight", async () => {
    const { key } = await storeTestKey({ plan: "pro", limits: { perMinute: 3, perDay: 5 } });
    setClock(0);
    expect(statuses(await send(key, 3))).toEqual([200, 200, 200]);
    setClock(60);
    const dayEnd = Date.UTC(2030, 2, 11) / 1000;
    const second = await send(key, 3);
    expect(statuses(second)).toEqual([200, 200, 429]);
    expect(Object.fromEntries(second[2].headers)).toMatchObject({
      "x-ratelimit-resource": "day",
      "x-ratelimit-limit": "5",
      "x-ratelimit-remaining": "0",
      "x-ratelimit-reset": String(dayEnd),
      "retry-after": String(dayEnd - at(60) / 1000),
    });
    setClock(3600);
    expect(statuses(await send(key, 1))).toEqual([429]);

    vi.setSystemTime(Date.UTC(2030, 2, 11, 0, 0, 0));
    const [tomorrow] = await send(key, 1);
    expect(tomorrow.status).toBe(200);
    expect(tomorrow.headers.get("RateLimit")).toBe('"minute";r=2;t=60, "day";r=4;t=86400');
  });

  it("reports the window with fewer requests left, and the later-resetting one on a tie", async () => {
    setClock(0);
    const fewerInMinute = await storeTestKey({ plan: "pro", limits: { perMinute: 3, perDay: 4 } });
    const [first] = await send(fewerInMinute.key, 1);
    // 2 left in the minute, 3 in the day: the minute is reported.
    expect(first.headers.get("X-RateLimit-Resource")).toBe("minute");
    expect(first.headers.get("X-RateLimit-Remaining")).toBe("2");
    expect(first.headers.get("X-RateLimit-Reset")).toBe(String(at(60) / 1000));

    const tied = await storeTestKey({ plan: "pro", limits: { perMinute: 3, perDay: 3 } });
    const [tie] = await send(tied.key, 1);
    // 2 left in each: the day, which resets later, is reported.
    expect(tie.headers.get("X-RateLimit-Resource")).toBe("day");
    expect(tie.headers.get("X-RateLimit-Remaining")).toBe("2");
    expect(tie.headers.get("X-RateLimit-Reset")).toBe(String(Date.UTC(2030, 2, 11) / 1000));
  });

  it("does not count refused requests", async () => {
    const { key } = await storeTestKey({ plan: "pro", limits: { perMinute: 2, perDay: 3 } });
    setClock(0);
    expect(statuses(await send(key, 10))).toEqual([200, 200, 429, 429, 429, 429, 429, 429, 429, 429]);
    setClock(60);
    // Had the refusals counted, the day (3) would be used up.
    const [next] = await send(key, 1);
    expect(next.status).toBe(200);
    expect(next.headers.get("RateLimit")).toBe(`"minute";r=1;t=60, "day";r=0;t=${86400 - 43260}`);
  });
});

describe("bans", () => {
  it("bans after more than BAN_THRESHOLD refusals in a row, without extending, then lets the caller back", async () => {
    expect(env.BAN_THRESHOLD).toBe("20");
    expect(env.BAN_SECONDS).toBe("900");
    const { key } = await storeTestKey({ plan: "free", limits: { perMinute: 1, perDay: 1000 } });
    setClock(10);
    expect(statuses(await send(key, 21))).toEqual([200, ...Array(20).fill(429)]);

    // The 21st refusal in a row starts the ban.
    setClock(20.5);
    const [banned] = await send(key, 1);
    expect(await errorBodyOf(banned)).toMatchObject({ code: "api_key_banned", status: 429 });
    const banEnd = at(21) / 1000 + 900;
    // Exactly BAN_SECONDS, though the ban started mid-second.
    expect(banned.headers.get("Retry-After")).toBe("900");
    expect(banned.headers.get("X-RateLimit-Remaining")).toBe("0");
    expect(banned.headers.get("X-RateLimit-Reset")).toBe(String(banEnd));

    // Requests during the ban neither count nor extend it, even in a fresh minute.
    setClock(500);
    const during = await send(key, 5);
    for (const response of during) {
      expect((await errorBodyOf(response)).code).toBe("api_key_banned");
      expect(response.headers.get("X-RateLimit-Reset")).toBe(String(banEnd));
      expect(response.headers.get("Retry-After")).toBe(String(banEnd - at(500) / 1000));
    }

    vi.setSystemTime(banEnd * 1000);
    const [after] = await send(key, 1);
    expect(after.status).toBe(200);
    expect(after.headers.get("RateLimit")).toMatch(/^"minute";r=0;t=\d+, "day";r=998;/);
  });

  it("does not ban a caller whose refusals are interrupted by admitted requests", async () => {
    const { key } = await storeTestKey({ plan: "free", limits: { perMinute: 1, perDay: 1000 } });
    for (let minute = 0; minute < 3; minute++) {
      setClock(minute * 60);
      expect(statuses(await send(key, 16))).toEqual([200, ...Array(15).fill(429)]);
    }
  });
});

describe("plans", () => {
  it("applies an enterprise key's own limits", async () => {
    const { key } = await storeTestKey({ plan: "enterprise", limits: { perMinute: 7, perDay: 70 } });
    setClock(0);
    const responses = await send(key, 8);
    expect(statuses(responses)).toEqual([...Array(7).fill(200), 429]);
    expect(responses[0].headers.get("RateLimit-Policy")).toBe('"minute";q=7;w=60, "day";q=70;w=86400');
  });

  it.each([
    ["pro", 300, 10000],
    ["business", 1000, 100000],
  ] as const)("gives a %s key its plan's limits", async (plan, perMinute, perDay) => {
    const { key } = await storeTestKey({ plan });
    const [response] = await send(key, 1);
    expect(response.headers.get("RateLimit-Policy")).toBe(`"minute";q=${perMinute};w=60, "day";q=${perDay};w=86400`);
  });
});
