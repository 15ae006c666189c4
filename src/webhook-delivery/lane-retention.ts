/**
 * What a lane keeps, how long, and what a pending row, a settled entry, a log entry and a replay cost its storage
 * (test/workers/events/event-storage.test.ts keeps the sizes true; docs/design/order-events.md#capacity).
 */

/** How long settled deliveries and their attempts are kept in a lane. */
export const DELIVERY_LOG_MS = 7 * 86_400_000;
/** How long a lane waits to prune again after a prune that left nothing due: a minute's blocks outlive the week. */
export const PRUNE_GAP_MS = 60_000;
/** A delivery refused at its first try: its pending row, with that attempt inline (PENDING_CAP of them at most). */
export const PENDING_ROW_BYTES = 140;
/** The same settled, with its two attempts, in the log's block. */
export const SETTLED_ENTRY_BYTES = 175;
/** A delivery that went through at its first try: its entry in the log's block. */
export const LOG_ENTRY_BYTES = 90;
/** The same with an answer of all the characters kept (ANSWER_SHOWN), the capacity's worst case. */
export const LOG_ENTRY_MAX_BYTES = 340;
/** A failed range recovered, whatever its length: its replay row, with an event left out. */
export const REPLAY_ROW_BYTES = 45;
