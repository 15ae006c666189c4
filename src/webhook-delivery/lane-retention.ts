/**
 * What a lane keeps, how long, and what a delivery, an attempt and a log entry cost its storage
 * (test/workers/events/event-storage.test.ts keeps the sizes true; docs/design/order-events.md#capacity).
 */

/** How long settled deliveries and their attempts are kept in a lane. */
export const DELIVERY_LOG_MS = 7 * 86_400_000;
/** A delivery with a row of its own, and each attempt of it. */
export const LANE_DELIVERY_BYTES = 70;
export const LANE_ATTEMPT_BYTES = 90;
/** A delivery that went through at its first try: its entry in the log's block. */
export const LOG_ENTRY_BYTES = 90;
