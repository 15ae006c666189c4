/**
 * What a lane keeps, how long, and what a settled delivery and an attempt cost its storage
 * (test/workers/events/event-storage.test.ts keeps the sizes true; docs/design/order-events.md#capacity).
 */

/** How long settled deliveries and their attempts are kept in a lane. */
export const DELIVERY_LOG_MS = 7 * 86_400_000;
export const LANE_DELIVERY_BYTES = 70;
export const LANE_ATTEMPT_BYTES = 90;
