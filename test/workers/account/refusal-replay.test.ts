import { env } from "cloudflare:workers";
import { describe, expect, it, vi } from "vitest";
import { isolateMemory } from "../../../src/app/isolate-memory";
import type { RequestLogLine } from "../../../src/framework/middleware/request-log";
import { storeTestKey } from "../../support/test-keys";
import { apiWith } from "../../support/request";
import { onAFakeClock, setClock } from "../../support/limits-clock";

/**
 * A caller the isolate already refuses is answered its last refusal again
 * (src/account/rate-limit.ts, replayRefusal): byte for byte the response the limiter
 * wrote for that state but its request id, with its own log line and
 * analytics point, and counted toward a ban as every refusal is.
 */

onAFakeClock();

interface Answer {
  status: number;
  headers: Record<string, string>;
  body: string;
  line: RequestLogLine;
  point: AnalyticsEngineDataPoint;
}

/**
 * Bindings that record the analytics points, one object for the whole test: a refusal is repeated only under the
 * bindings it was written under.
 */
function recordingBindings(): { bindings: Env; points: AnalyticsEngineDataPoint[] } {
  const points: AnalyticsEngineDataPoint[] = [];
  return {
    points,
    bindings: {
      ...env,
      REQUESTS: { writeDataPoint: (point?: AnalyticsEngineDataPoint) => void points.push(point ?? {}) },
    } as Env,
  };
}

/** One request, with the log line and the point it wrote. */
async function answer(
  recording: ReturnType<typeof recordingBindings>,
  init: Parameters<typeof apiWith>[2],
): Promise<Answer> {
  const lines: string[] = [];
  const log = vi
    .spyOn(console, "log")
    .mockImplementation((...args: unknown[]) => void lines.push(args.map(String).join(" ")));
  const response = await apiWith(recording.bindings, "/v1/store/orders", init);
  const body = await response.text();
  log.mockRestore();
  expect(lines).toHaveLength(1);
  return {
    status: response.status,
    headers: Object.fromEntries(response.headers),
    body,
    line: JSON.parse(lines[0]!) as RequestLogLine,
    point: recording.points.at(-1)!,
  };
}

/** What two answers must share when one repeats the other: everything but the request's id. */
const withoutId = ({ headers, line, ...rest }: Answer) => ({
  ...rest,
  headers: { ...headers, "x-request-id": undefined },
  line: { ...line, requestId: undefined },
});

describe("a refusal repeated", () => {
  it("answers a refused key's next refusals in the same state with the response written for it, a new id each, without the limiter's chain, and bans on time", async () => {
    const { key } = await storeTestKey({ plan: "free", limits: { perMinute: 1, perDay: 100 } });
    const recording = recordingBindings();
    setClock(10.2);
    expect((await answer(recording, { key })).status).toBe(200);
    // The object refuses the first; the isolate writes the second from its book.
    const written = [await answer(recording, { key }), await answer(recording, { key })];
    expect(written.map((refusal) => refusal.status)).toEqual([429, 429]);

    const admit = vi.spyOn(isolateMemory.leases, "admit");
    const repeated: Answer[] = [];
    for (let i = 0; i < 5; i++) repeated.push(await answer(recording, { key }));
    expect(admit).not.toHaveBeenCalled();
    for (const refusal of repeated) expect(withoutId(refusal)).toEqual(withoutId(written[1]!));
    const ids = [...written, ...repeated].map((refusal) => refusal.headers["x-request-id"]);
    expect(new Set(ids).size).toBe(ids.length);
    for (const refusal of repeated) expect(refusal.line.requestId).toBe(refusal.headers["x-request-id"]);
    expect(JSON.parse(repeated[0]!.body)).toMatchObject({ code: "rate_limit_exceeded", status: 429 });

    // Every refusal counts toward the ban: the 21st in a row (BAN_THRESHOLD 20) is the first answered banned.
    const rest: Answer[] = [];
    for (let i = 0; i < 14; i++) rest.push(await answer(recording, { key }));
    expect(rest.map((refusal) => JSON.parse(refusal.body).code)).toEqual([
      ...Array(13).fill("rate_limit_exceeded"),
      "api_key_banned",
    ]);
    // A banned key's refusals repeat too.
    admit.mockClear();
    const banned = [
      await answer(recording, { key }),
      await answer(recording, { key }),
      await answer(recording, { key }),
    ];
    expect(banned.map((refusal) => JSON.parse(refusal.body).code)).toEqual([
      "api_key_banned",
      "api_key_banned",
      "api_key_banned",
    ]);
    expect(admit.mock.calls.length).toBeLessThanOrEqual(1);
    expect(withoutId(banned[2]!)).toEqual(withoutId(banned[1]!));
  });

  it("writes the refusal anew when its state changes: a second later its wait is a second shorter", async () => {
    const { key } = await storeTestKey({ plan: "free", limits: { perMinute: 1, perDay: 100 } });
    const recording = recordingBindings();
    setClock(10.2);
    await answer(recording, { key });
    const before = [await answer(recording, { key }), await answer(recording, { key })];
    expect(before[1]!.headers["retry-after"]).toBe("50");

    setClock(11.2);
    const admit = vi.spyOn(isolateMemory.leases, "admit");
    const after = await answer(recording, { key });
    expect(admit).toHaveBeenCalledTimes(1);
    expect(after.headers["retry-after"]).toBe("49");
    expect(JSON.parse(after.body).message).toContain("Retry after 49 seconds");
  });

  it("stops repeating a key's refusal once the account's word on the key is no longer fresh here", async () => {
    const { key, record } = await storeTestKey({ plan: "free", limits: { perMinute: 1, perDay: 100 } });
    const recording = recordingBindings();
    setClock(10.2);
    for (let i = 0; i < 3; i++) await answer(recording, { key });
    const admit = vi.spyOn(isolateMemory.leases, "admit");
    await answer(recording, { key });
    expect(admit).not.toHaveBeenCalled();
    // As when the key changed through this isolate, or its word outlived its lease: the account is asked again.
    isolateMemory.leases.forgetKey(record.id, record.id);
    const again = await answer(recording, { key });
    expect(again.status).toBe(429);
    expect(admit).toHaveBeenCalledTimes(1);
  });

  it("keeps no refusal for a key spelled otherwise than `Bearer <key>`: one key in many spellings cannot fill the isolate", async () => {
    const { key } = await storeTestKey({ plan: "free", limits: { perMinute: 1, perDay: 100 } });
    const recording = recordingBindings();
    setClock(10.2);
    const spelled = { key: null, headers: { Authorization: `bearer   ${key}` } };
    await answer(recording, spelled);
    for (let i = 0; i < 2; i++) expect((await answer(recording, spelled)).status).toBe(429);
    const admit = vi.spyOn(isolateMemory.leases, "admit");
    expect((await answer(recording, spelled)).status).toBe(429);
    expect(admit).toHaveBeenCalledTimes(1);
  });

  it("repeats a refusal to an address that sent no credential, never to a request carrying a cookie", async () => {
    const recording = recordingBindings();
    const address = { "CF-Connecting-IP": "2001:db8:5:7::1" };
    setClock(10.2);
    let status = 200;
    for (let i = 0; i < 100 && status !== 429; i++)
      status = (await answer(recording, { key: null, headers: address })).status;
    expect(status).toBe(429);
    await answer(recording, { key: null, headers: address });
    const admit = vi.spyOn(isolateMemory.leases, "admit");
    const repeated = await answer(recording, { key: null, headers: address });
    expect(repeated.status).toBe(429);
    expect(admit).not.toHaveBeenCalled();
    expect(repeated.line).toMatchObject({ keyId: null, plan: null, limit: "limited" });

    const withCookie = await answer(recording, { key: null, headers: { ...address, Cookie: "unrelated=1" } });
    expect(withCookie.status).toBe(429);
    expect(admit).toHaveBeenCalledTimes(1);
  });
});
