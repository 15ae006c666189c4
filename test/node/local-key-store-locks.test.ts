import { afterEach, describe, expect, it, vi } from "vitest";
import { whenFree } from "../../scripts/lib/key-store";

/**
 * The local key store shares its SQLite files with a running `npm start`
 * (scripts/lib/key-store.ts). A lock met there reaches the store as this
 * error, captured from a served state under load, where workerd's log said
 * SQLITE_BUSY_SNAPSHOT: it must be tried again, not end the command.
 */
const LOCKED_AS_REPORTED =
  "Error: D1_ERROR: Failed to parse body as JSON, got: Error: internal error; reference = " +
  "006bi4ue1o9upoqhbh94c26j\n  " +
  "  at D1DatabaseObject.queryExecute (file:///node_modules/miniflare/dist/src/workers/d1/database.worker.js:191:73)";

function failingTimes(times: number, message: string) {
  let calls = 0;
  return {
    calls: () => calls,
    operation: async () => {
      calls += 1;
      if (calls <= times) throw new Error(message);
      return "done";
    },
  };
}

describe("the local key store meeting another runtime's lock", () => {
  afterEach(() => vi.useRealTimers());

  it("tries again a lock reported as D1's internal error, and as SQLITE_BUSY", async () => {
    // The pauses between tries are the store's own timers: run at once here.
    vi.useFakeTimers();
    for (const message of [LOCKED_AS_REPORTED, "D1_ERROR: database is locked: SQLITE_BUSY"]) {
      const flaky = failingTimes(2, message);
      const result = whenFree(flaky.operation);
      await vi.runAllTimersAsync();
      expect(await result).toBe("done");
      expect(flaky.calls()).toBe(3);
    }
  });

  it("fails at once on any other error", async () => {
    const broken = failingTimes(1, "D1_ERROR: no such table: key_events");
    await expect(whenFree(broken.operation)).rejects.toThrow("no such table");
    expect(broken.calls()).toBe(1);
  });
});
