import { afterEach, beforeEach, vi } from "vitest";
import { feedCursor } from "../../src/events/order-event-feed-query";
import { clearOrders } from "./seed";
import { feedHead } from "./webhook-fixtures";

/** A page of the feed as clients read it (docs/api.md#events-and-webhooks). */
export interface EventPage {
  data: {
    id: string;
    type: string;
    createdAt: string;
    order: Record<string, unknown>;
    previous?: Record<string, unknown>;
  }[];
  nextCursor: string;
}

/**
 * Each test reads only its own events: before it, the orders are cleared and
 * `start` is the cursor just after every event written so far; after it, the
 * timers and mocks are restored.
 */
export function eventsOfEachTest(): { readonly start: string } {
  const feed = { start: "" };
  beforeEach(async () => {
    await clearOrders();
    feed.start = await feedCursor(await feedHead());
  });
  afterEach(() => {
    vi.useRealTimers();
    vi.restoreAllMocks();
  });
  return feed;
}
