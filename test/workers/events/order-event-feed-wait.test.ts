import { createExecutionContext } from "cloudflare:test";
import { env, exports } from "cloudflare:workers";
import { beforeEach, describe, expect, it, vi } from "vitest";
import worker from "../../../src/app/worker";
import { feedCursor } from "../../../src/events/order-event-feed-query";
import { apiWith, clientRequest } from "../../support/request";
import { seedOrders } from "../../support/seed";
import { eventsOfEachTest, type EventPage } from "../../support/event-feed";
import { feedHead } from "../../support/webhook-fixtures";
import { defaultKey } from "../../support/test-keys";

/**
 * The feed's wait (docs/api.md#events-and-webhooks): an empty page held until
 * an event comes or the wait ends, reading D1 at most once a second, and
 * ended when its client goes away.
 */
const feed = eventsOfEachTest();

// Its requests are built on the test's timers, so the key they send is made first.
beforeEach(async () => void (await defaultKey()));

describe("the feed's wait", () => {
  /** D1 with its batches (one per feed read) counted. */
  function countingReads(): { binding: D1Database; reads: () => number } {
    let reads = 0;
    const binding = new Proxy(env.DB, {
      get(target, property) {
        if (property === "withSession") {
          return (bookmark: string) => {
            const session = target.withSession(bookmark);
            return {
              prepare: (query: string) => session.prepare(query),
              // Counted once answered: the request then goes on to its next sleep at once.
              batch: async (statements: D1PreparedStatement[]) => {
                const results = await session.batch(statements);
                reads += 1;
                return results;
              },
              getBookmark: () => session.getBookmark(),
            };
          };
        }
        const value = Reflect.get(target, property);
        return typeof value === "function" ? value.bind(target) : value;
      },
    });
    return { binding, reads: () => reads };
  }

  /** A feed request on the test's timers: its response, when it comes. */
  function held(bindings: Env, query: string, init: RequestInit = {}) {
    let response: Response | undefined;
    const done = Promise.resolve(
      worker.fetch(clientRequest(`/v2/store/order-events?${query}`, init), bindings, createExecutionContext()),
    ).then((answer: Response) => (response = answer));
    return { done, answered: () => response };
  }

  /**
   * One second more on the test's timers, then the read it lets the request make (real I/O: waited for on the real
   * timers).
   */
  async function nextSecond(reads: () => number, expected: number): Promise<void> {
    await vi.advanceTimersByTimeAsync(1_000);
    await vi.waitFor(() => expect(reads()).toBe(expected), { timeout: 10_000 });
  }

  beforeEach(() => {
    vi.useFakeTimers({ toFake: ["Date", "setTimeout", "clearTimeout"] });
  });

  it("holds an empty page until an event comes, reading D1 once a second, and answers with it", async () => {
    const { binding, reads } = countingReads();
    const request = held({ ...env, DB: binding }, `after=${feed.start}&wait=20`);
    await vi.waitFor(() => expect(reads()).toBe(1), { timeout: 10_000 });
    await nextSecond(reads, 2);
    await nextSecond(reads, 3);
    expect(request.answered()).toBeUndefined();
    await seedOrders([{ id: 8 }]);
    await vi.advanceTimersByTimeAsync(1_000);
    const response = await request.done;
    expect(response.status).toBe(200);
    expect((await response.json<EventPage>()).data.map((event: EventPage["data"][number]) => event.order.id)).toEqual([
      "8",
    ]);
    expect(reads()).toBe(4);
  });

  it("answers an empty page with the position when the wait ends, after one read a second", async () => {
    const { binding, reads } = countingReads();
    const request = held({ ...env, DB: binding }, `after=${feed.start}&wait=3`);
    await vi.waitFor(() => expect(reads()).toBe(1), { timeout: 10_000 });
    for (let second = 1; second <= 3; second++) {
      expect(request.answered()).toBeUndefined();
      await nextSecond(reads, 1 + second);
    }
    const body = await (await request.done).json<EventPage>();
    expect(body).toEqual({ data: [], nextCursor: await feedCursor(await feedHead()) });
    expect(reads()).toBe(4);
  });

  it("stops waiting when the client goes away", async () => {
    const { binding, reads } = countingReads();
    const client = new AbortController();
    const request = held({ ...env, DB: binding }, `after=${feed.start}&wait=20`, { signal: client.signal });
    await vi.waitFor(() => expect(reads()).toBe(1), { timeout: 10_000 });
    client.abort();
    await vi.waitFor(() => expect(request.answered()).toBeDefined(), { timeout: 10_000 });
    expect(reads()).toBe(1);
  });

  it("ends a wait its caller cancels, through workerd itself", async () => {
    // A request cancelled by its caller, as Cloudflare's front line cancels one whose client disconnected:
    // the runtime, not the test, aborts the request's signal. The feed's reads are seen on D1's sessions;
    // it reads no more once cancelled, and answers at once, so the request's line is logged.
    vi.useRealTimers();
    const lines: string[] = [];
    vi.spyOn(console, "log").mockImplementation((line: string) => void lines.push(String(line)));
    const session = Object.getPrototypeOf(env.DB.withSession("first-unconstrained")) as D1DatabaseSession;
    const prepare = session.prepare;
    let statements = 0;
    session.prepare = function (this: D1DatabaseSession, query: string) {
      statements++;
      return prepare.call(this, query);
    };
    try {
      const caller = new AbortController();
      const request = clientRequest(`/v2/store/order-events?after=${feed.start}&wait=20`, { signal: caller.signal });
      const answer = exports.default.fetch(request).catch((error: Error) => error);
      await vi.waitFor(() => expect(statements).toBeGreaterThan(0), { timeout: 10_000 });
      const readsBeforeCancel = statements;
      caller.abort();
      expect(await answer).toBeInstanceOf(Error);
      // Answered, so logged: without the signal the runtime dropped the cancelled wait unanswered and unlogged.
      await vi.waitFor(
        () => expect(lines.some((line) => line.includes('"route":"/v2/store/order-events"'))).toBe(true),
        { timeout: 30_000 },
      );
      expect(statements).toBe(readsBeforeCancel);
    } finally {
      session.prepare = prepare;
    }
  }, 40_000);

  it("does not wait without wait", async () => {
    vi.useRealTimers();
    const { binding, reads } = countingReads();
    const response = await apiWith({ ...env, DB: binding }, `/v2/store/order-events?after=${feed.start}`);
    expect((await response.json<EventPage>()).data).toEqual([]);
    expect(reads()).toBe(1);
  });
});
