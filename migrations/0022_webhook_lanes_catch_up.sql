-- A lane the dispatcher could not reach no longer holds every other endpoint's
-- events back (docs/design/order-events.md#dispatch): the dispatcher's mark
-- moves on, and the endpoint catches up on its own from behind_after.
--
-- behind_after: NULL while the endpoint's lane has every event it wants up to
-- the dispatcher's mark; otherwise it has them up to this event and none after,
-- and is handed the rest in order, apart from the dispatcher's passes, until it
-- reaches the mark. behind_retry_at (epoch milliseconds) and behind_failures
-- space the tries at a lane that keeps failing, so it costs the passes little.
ALTER TABLE webhook_endpoints ADD COLUMN behind_after INTEGER;
ALTER TABLE webhook_endpoints ADD COLUMN behind_retry_at INTEGER;
ALTER TABLE webhook_endpoints ADD COLUMN behind_failures INTEGER NOT NULL DEFAULT 0;
