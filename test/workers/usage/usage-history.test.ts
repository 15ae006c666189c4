import { env } from "cloudflare:workers";
import {
  createExecutionContext,
  runDurableObjectAlarm,
  runInDurableObject,
  waitOnExecutionContext,
} from "cloudflare:test";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../../src/app/worker";
import { REFUSAL_FLUSH_MS } from "../../../src/account/lease-client";
import { LEASE_MS } from "../../../src/account/policy";
import { clientRequest, errorBodyOf, recordingContext } from "../../support/request";
import { defaultKey, storeTestKey } from "../../support/test-keys";

/**
 * The usage history (docs/api.md#usage): what each account's limiter object
 * decided, per minute, hour and day, for the key itself (GET /v2/usage) and
 * for operators (GET /admin/keys/{keyId}/usage/history). The clock is the
 * test's: leases expire and refusals are sent when the test says so.
 */
const TOKEN = "operator-token-for-tests";
/** 2030-03-10T12:00:00Z plus the given seconds, ahead of the real clock (alarms are scheduled by it). */
const at = (seconds: number) => Date.UTC(2030, 2, 10, 12, 0, 0) + seconds * 1000;

interface History {
  budget: string;
  granularity: string;
  buckets: { start: string; admitted: number; refused: number; reserved: number }[];
}

const pending: Promise<void>[] = [];
async function send(path: string, init: Parameters<typeof clientRequest>[1] = {}): Promise<Response> {
  const ctx = createExecutionContext();
  const response = await worker.fetch(clientRequest(path, init), env, ctx);
  pending.push(waitOnExecutionContext(ctx));
  return response;
}

/**
 * The same, its background work (a lease asked ahead of need, a refusal's record) waited for as a later request
 * would find it done; not a lease's expiry, which runs on (test/support/request.ts recordingContext).
 */
async function sendSettled(path: string, init: Parameters<typeof clientRequest>[1] = {}): Promise<Response> {
  const context = recordingContext();
  const response = await worker.fetch(clientRequest(path, init), env, context.ctx);
  await context.settled();
  return response;
}
const asOperator = (path: string) => send(path, { key: null, headers: { Authorization: `Bearer ${TOKEN}` } });

afterEach(async () => {
  // Background work a request left on the test's clock (a lease's expiry, taken by the last requests of a
  // vi.waitFor) runs out on it: dropped with the fake timers, it would never end, and the wait below with it.
  if (vi.isFakeTimers()) await vi.runAllTimersAsync();
  vi.useRealTimers();
  await Promise.all(pending.splice(0));
});

// Its requests are built as a client's, with the default key made first.
beforeEach(async () => void (await defaultKey()));

describe("the usage history", () => {
  it("counts exactly what the limiter decided, minute by minute: leases as they were spent, every 429 once", async () => {
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] });
    vi.setSystemTime(at(10));
    const steady = await storeTestKey({ plan: "enterprise", limits: { perMinute: 1_000, perDay: 10_000 } });
    const tight = await storeTestKey({ plan: "free", limits: { perMinute: 3, perDay: 100 } });
    // A steady caller leases ahead of its requests; a tight one is refused after three, first by its object, then by
    // the isolate.
    for (let i = 0; i < 8; i++) {
      expect((await send("/v1/store/orders", { key: steady.key })).status).toBe(200);
      await vi.advanceTimersByTimeAsync(50);
    }
    const statuses = [];
    for (let i = 0; i < 9; i++) statuses.push((await send("/v1/store/orders", { key: tight.key })).status);
    expect(statuses).toEqual([200, 200, 200, 429, 429, 429, 429, 429, 429]);
    // The next minute: one more of each.
    vi.setSystemTime(at(70));
    expect((await send("/v1/store/orders", { key: steady.key })).status).toBe(200);
    expect((await send("/v1/store/orders", { key: tight.key })).status).toBe(200);

    // Leases expire and hand back what they left; the isolate's refusals go to the object.
    await vi.advanceTimersByTimeAsync(Math.max(LEASE_MS, REFUSAL_FLUSH_MS) + 100);
    const minutes = async (keyId: string) => {
      const response = await asOperator(
        `/admin/keys/${keyId}/usage/history?granularity=minute&from=2030-03-10T11:59:00Z&to=2030-03-10T12:02:00Z`,
      );
      expect(response.status).toBe(200);
      return response.json<History>();
    };
    await vi.waitFor(
      async () => {
        expect((await minutes(steady.record.id)).buckets).toEqual([
          { start: "2030-03-10T11:59:00.000Z", admitted: 0, refused: 0, reserved: 0 },
          { start: "2030-03-10T12:00:00.000Z", admitted: 8, refused: 0, reserved: 0 },
          { start: "2030-03-10T12:01:00.000Z", admitted: 1, refused: 0, reserved: 0 },
        ]);
        expect((await minutes(tight.record.id)).buckets).toEqual([
          { start: "2030-03-10T11:59:00.000Z", admitted: 0, refused: 0, reserved: 0 },
          { start: "2030-03-10T12:00:00.000Z", admitted: 3, refused: 6, reserved: 0 },
          { start: "2030-03-10T12:01:00.000Z", admitted: 1, refused: 0, reserved: 0 },
        ]);
      },
      { timeout: 10_000, interval: 20 },
    );
    const hours = await (
      await asOperator(
        `/admin/keys/${tight.record.id}/usage/history?granularity=hour` +
          "&from=2030-03-10T12:00:00Z&to=2030-03-10T13:00:00Z",
      )
    ).json<History>();
    expect(hours).toEqual({
      budget: tight.record.id,
      granularity: "hour",
      buckets: [{ start: "2030-03-10T12:00:00.000Z", admitted: 4, refused: 6, reserved: 0 }],
    });
    const days = await (
      await asOperator(
        `/admin/keys/${tight.record.id}/usage/history?granularity=day` +
          "&from=2030-03-09T00:00:00Z&to=2030-03-11T00:00:00Z",
      )
    ).json<History>();
    expect(days.buckets).toEqual([
      { start: "2030-03-09T00:00:00.000Z", admitted: 0, refused: 0, reserved: 0 },
      { start: "2030-03-10T00:00:00.000Z", admitted: 4, refused: 6, reserved: 0 },
    ]);
  }, 30_000);

  it("answers a key its own account's history, shared by a rotated pair, with defaults per granularity", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(at(30));
    const owner = await storeTestKey({ plan: "pro" });
    const rotated = await storeTestKey({ plan: "pro", budget: owner.record.id });
    const stranger = await storeTestKey({ plan: "pro" });
    expect((await send("/v1/store/orders", { key: owner.key })).status).toBe(200);

    const own = await send("/v2/usage?granularity=minute", { key: rotated.key });
    expect(own.status).toBe(200);
    const body = await own.json<History>();
    expect(body.budget).toBe(owner.record.id);
    // The last 60 minutes, the current one last; this minute holds what was granted so far (the lease's unspent part
    // included until it is handed back).
    expect(body.buckets).toHaveLength(60);
    expect(body.buckets.at(-1)!.start).toBe("2030-03-10T12:00:00.000Z");
    expect(body.buckets.at(-1)!.admitted).toBeGreaterThanOrEqual(2);
    expect(body.buckets.slice(0, -1).every((bucket) => bucket.admitted === 0 && bucket.refused === 0)).toBe(true);

    const theirs = await (await send("/v2/usage?granularity=day", { key: stranger.key })).json<History>();
    expect(theirs.budget).toBe(stranger.record.id);
    expect(theirs.buckets).toHaveLength(30);
    expect(theirs.buckets.at(-1)).toEqual({
      start: "2030-03-10T00:00:00.000Z",
      admitted: expect.any(Number),
      refused: 0,
      reserved: expect.any(Number),
    });
    expect((await (await send("/v2/usage", { key: stranger.key })).json<History>()).buckets).toHaveLength(24);
  });

  it("answers 400 invalid_query for what it cannot answer", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(at(0));
    for (const [query, words] of [
      ["granularity=week", "granularity must be one of minute, hour, day"],
      ["from=yesterday", "from must be an RFC 3339 date-time"],
      ["from=2030-03-10T12:00:00Z&to=2030-03-10T11:00:00Z", "from must come before to"],
      ["granularity=minute&from=2030-03-09T00:00:00Z&to=2030-03-10T12:00:00Z", "At most 1440 buckets"],
      ["granularity=hour&from=2030-03-01T00:00:00Z&to=2030-03-02T00:00:00Z", "Minutes and hours are kept for 48 hours"],
      ["granularity=day&from=2028-01-01T00:00:00Z&to=2028-01-02T00:00:00Z", "Days are kept for 400 days"],
      ["granularity=day&granularity=day", "given more than once"],
      ["since=2030-03-10T00:00:00Z", "Unknown query parameter"],
    ]) {
      const response = await send(`/v2/usage?${query}`);
      expect(response.status, query).toBe(400);
      const error = await errorBodyOf(response);
      expect(error.code).toBe("invalid_query");
      expect(error.message, query).toContain(words);
    }
  });

  it("reads what was served: the caller's own isolate hands its leases back first, so a quiet key reads its own requests", async () => {
    const key = await storeTestKey({ plan: "enterprise", limits: { perMinute: 10_000, perDay: 100_000 } });
    // A steady caller: its isolate leases ahead of need, and holds what it has not spent yet.
    for (let round = 0; round < 4; round++) {
      // A renewal one of them asks for in the background is granted before the usage is read, as it would be by then.
      const responses = await Promise.all(
        Array.from({ length: 10 }, () => sendSettled("/v1/store/orders", { key: key.key })),
      );
      for (const response of responses) expect(response.status).toBe(200);
    }
    const history = await (await send("/v2/usage?granularity=minute", { key: key.key })).json<History>();
    const sum = (field: "admitted" | "reserved") => history.buckets.reduce((total, bucket) => total + bucket[field], 0);
    // 40 lists and the usage request itself.
    expect(sum("admitted")).toBe(41);
    expect(sum("reserved")).toBe(0);
  });

  it("sets apart as reserved what another isolate holds of its grant, until it hands it back, spent or not", async () => {
    // Mid-minute, and still: a grant's lease ends at its minute's end, and on the wall clock a read just after it found
    // nothing reserved.
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(at(10));
    const key = await storeTestKey({ plan: "enterprise", limits: { perMinute: 10_000, perDay: 100_000 } });
    const stub = env.ACCOUNTS.getByName(key.record.id);
    const ban = { threshold: 20, seconds: 900 };
    // Another isolate asks for 10, its asking request's own included: 9 are held.
    const answer = await stub.acquire({
      id: "ask-elsewhere",
      limits: { perMinute: 10_000, perDay: 100_000 },
      ban,
      want: 10,
      speculative: false,
    });
    expect(answer.granted).toBe(10);
    const read = async () => {
      const history = await (await send("/v2/usage?granularity=minute", { key: key.key })).json<History>();
      return {
        admitted: history.buckets.reduce((total, bucket) => total + bucket.admitted, 0),
        reserved: history.buckets.reduce((total, bucket) => total + bucket.reserved, 0),
      };
    };
    // The asking request and this read are admitted; the other isolate's 9 are reserved.
    expect(await read()).toEqual({ admitted: 2, reserved: 9 });
    // It spends 4 and hands back 5 (naming its grant): 4 more admitted, nothing reserved.
    const minuteStart = answer.minute.reset - answer.minute.size;
    await stub.settle({
      ban,
      unspent: [{ minuteStart, dayStart: answer.day.reset - answer.day.size, count: 5, grantId: "ask-elsewhere" }],
    });
    expect(await read()).toEqual({ admitted: 2 + 4 + 1, reserved: 0 });
  });

  it("forgets minutes after 48 hours and days after 400 days, on the object's alarm, and empties an object with nothing left", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(at(0));
    const key = await storeTestKey({ plan: "pro" });
    expect((await send("/v1/store/orders", { key: key.key })).status).toBe(200);
    await Promise.all(pending.splice(0));
    const stub = env.ACCOUNTS.getByName(key.record.id);
    const count = (table: string) =>
      runInDurableObject(
        stub,
        (_, state) => state.storage.sql.exec<{ n: number }>(`SELECT count(*) AS n FROM ${table}`).one().n,
      );
    expect([await count("usage_minutes"), await count("usage_days")]).toEqual([1, 1]);

    vi.setSystemTime(at(49 * 3_600));
    await runInDurableObject(stub, async (_, state) => state.storage.setAlarm(Date.now()));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect([await count("usage_minutes"), await count("usage_days")]).toEqual([0, 1]);
    const alarm = await runInDurableObject(stub, (_, state) => state.storage.getAlarm());
    expect(alarm).toBe(Date.UTC(2030, 2, 10) + 400 * 86_400_000);

    vi.setSystemTime(alarm!);
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(
      await runInDurableObject(
        stub,
        async (_, state) => [...(await state.storage.list()).keys()].length + ((await state.storage.getAlarm()) ?? 0),
      ),
    ).toBe(0);
  });

  it("keeps an account's keys when its alarm lets its windows go: its key is served days later", async () => {
    vi.useFakeTimers({ toFake: ["Date"] });
    vi.setSystemTime(at(0));
    const key = await storeTestKey({ plan: "pro" });
    const stub = env.ACCOUNTS.getByName(key.record.id);
    expect((await send("/v1/store/orders", { key: key.key })).status).toBe(200);
    await Promise.all(pending.splice(0));
    vi.setSystemTime(at(2 * 86_400));
    await runInDurableObject(stub, async (_, state) => state.storage.setAlarm(Date.now()));
    expect(await runDurableObjectAlarm(stub)).toBe(true);
    expect(await runInDurableObject(stub, async (_, state) => state.storage.kv.get("state"))).toBeUndefined();
    expect(await stub.key(key.record.id)).toMatchObject({ id: key.record.id, plan: "pro" });

    // The same instance serves the account's next request: admitted and counted, not 503 (no such table).
    expect((await send("/v1/store/orders", { key: key.key })).status).toBe(200);
    await Promise.all(pending.splice(0));
    const history = await send(`/v2/usage?granularity=minute&from=${new Date(at(2 * 86_400 - 60)).toISOString()}`, {
      key: key.key,
    });
    expect(history.status).toBe(200);
  });
});
