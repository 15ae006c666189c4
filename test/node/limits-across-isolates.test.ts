import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { startBenchRuntime, type BenchRuntime } from "../../bench/runtime";

/**
 * The real worker, bundled as for a deploy, running as three isolates (three
 * locations) bound to one Durable Object namespace, D1 and KV: each isolate
 * keeps its own leases, and the key's object is the one counter of record.
 * The bench worker is the app plus the routes that store keys.
 */
const ISOLATES = 3;
let runtime: BenchRuntime;

beforeAll(async () => {
  runtime = await startBenchRuntime("bench/wrangler.jsonc", ISOLATES);
});
afterAll(() => runtime?.dispose());

async function storeKeys(): Promise<Record<"enterprise" | "limited" | "banned", string>> {
  return (await (await runtime.fetchOn(0, "/bench/keys", { method: "POST" })).json()) as never;
}

async function keyWith(perMinute: number, perDay: number): Promise<string> {
  const response = await runtime.fetchOn(0, `/bench/key?perMinute=${perMinute}&perDay=${perDay}`, { method: "POST" });
  return ((await response.json()) as { key: string }).key;
}

/** The bench worker's variant (bench/worker.ts) with the service's ban rule. */
const BANS = { "X-Bench-Variant": "bans" };

const list = (isolate: number, key: string, headers: Record<string, string> = {}) =>
  runtime
    .fetchOn(isolate, "/v1/store/orders", { headers: { Authorization: `Bearer ${key}`, ...headers } })
    .then(async (response) => {
      await response.arrayBuffer();
      return response;
    });

describe("limits across isolates", () => {
  it("runs each isolate with its own memory (its own leases)", async () => {
    const { enterprise } = await storeKeys();
    await list(0, enterprise);
    const calls = await Promise.all(
      [0, 1, 2].map(
        async (i) => ((await (await runtime.fetchOn(i, "/bench/calls")).json()) as { calls: number }).calls,
      ),
    );
    expect(calls[0]).toBeGreaterThan(0);
    expect(calls.slice(1)).toEqual([0, 0]);
  });

  it("never admits more than the limit when every isolate hammers one key at once, and admits close to it", async () => {
    // The day's limit is the minute's: a burst that a minute's end cuts in two is held to 50 all the same.
    const key = await keyWith(50, 50);
    const responses = await Promise.all(Array.from({ length: 300 }, (_, index) => list(index % ISOLATES, key)));
    const admitted = responses.filter((response) => response.status === 200).length;
    expect(responses.filter((response) => response.status === 429)).toHaveLength(300 - admitted);
    expect(admitted).toBeLessThanOrEqual(50);
    expect(admitted).toBeGreaterThanOrEqual(48);
  });

  it("shows a ban started through one isolate to every other", async () => {
    const { banned } = await storeKeys();
    // The bench's "bans" variant keeps the service's ban rule: 20 refusals in a row, then a ban.
    // Refused through one isolate until its object bans the key: a minute's end among the requests admits one and
    // starts the streak again, so the count of requests is not fixed.
    const first = await list(0, banned, BANS);
    expect(first.status).toBe(200);
    let code: string | undefined;
    for (let i = 0; i < 60 && code !== "api_key_banned"; i++) {
      const response = await runtime.fetchOn(0, "/v1/store/orders", {
        headers: { Authorization: `Bearer ${banned}`, ...BANS },
      });
      code = ((await response.json()) as { code?: string }).code;
    }
    expect(code).toBe("api_key_banned");
    for (const isolate of [1, 2]) {
      const response = await runtime.fetchOn(isolate, "/v1/store/orders", {
        headers: { Authorization: `Bearer ${banned}`, ...BANS },
      });
      expect(response.status).toBe(429);
      expect(((await response.json()) as { code: string }).code).toBe("api_key_banned");
    }
  });
});
