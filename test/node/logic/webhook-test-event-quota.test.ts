import { describe, expect, it } from "vitest";
import {
  admitTestEvent,
  TEST_EVENT_WINDOW_MS,
  TEST_EVENTS_PER_WINDOW,
} from "../../../src/account/webhook-test-event-quota";

/** The test events an endpoint may be sent (docs/api.md#webhook-endpoints), on a clock the test moves. */
describe("admitTestEvent", () => {
  it("admits 10 within a minute, refuses the 11th until the oldest leaves the window, then admits again", () => {
    let times: number[] = [];
    const start = 1_000_000;
    for (let n = 0; n < TEST_EVENTS_PER_WINDOW; n++) {
      const answer = admitTestEvent(times, start + n * 1_000);
      expect(answer.retryAfterMs).toBeNull();
      times = answer.times;
    }
    const refused = admitTestEvent(times, start + 10_000);
    expect(refused.retryAfterMs).toBe(TEST_EVENT_WINDOW_MS - 10_000);
    expect(refused.times).toHaveLength(TEST_EVENTS_PER_WINDOW);
    // Just before the oldest leaves: still refused; at that moment: admitted.
    expect(admitTestEvent(refused.times, start + TEST_EVENT_WINDOW_MS - 1).retryAfterMs).toBe(1);
    const admitted = admitTestEvent(refused.times, start + TEST_EVENT_WINDOW_MS);
    expect(admitted.retryAfterMs).toBeNull();
    expect(admitted.times).toHaveLength(TEST_EVENTS_PER_WINDOW);
  });

  it("forgets times outside the window, and a clock that went back does not count the future ones", () => {
    expect(admitTestEvent([1, 2, 3], 10 * TEST_EVENT_WINDOW_MS).times).toEqual([10 * TEST_EVENT_WINDOW_MS]);
    const future = Array.from({ length: 20 }, (_, i) => 5_000 + i);
    expect(admitTestEvent(future, 1_000).retryAfterMs).toBeNull();
  });
});
