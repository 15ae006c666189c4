-- Deliveries that survive faults (docs/design/order-events.md#faults).
--
-- schedule_step: the receiver's answers counted against the retry schedule.
-- The queue's own attempt count also counts retries after a failure of this
-- service's dependencies (D1, KV), so it cannot tell a receiver that failed
-- the whole schedule from a database that was down for a minute; this can.
-- A manual retry starts it again at 0. Settled rows keep their attempts as
-- their steps; pending ones start a fresh schedule (a row retried by hand
-- before this column kept the attempts of its earlier schedule).
ALTER TABLE webhook_deliveries ADD COLUMN schedule_step INTEGER NOT NULL DEFAULT 0;
UPDATE webhook_deliveries SET schedule_step = attempts WHERE outcome <> 'pending';

-- The sweeper's reading: pending deliveries by when they were due, so a
-- delivery whose message fell out of the queue is found without a scan.
CREATE INDEX webhook_deliveries_due ON webhook_deliveries (coalesce(next_attempt_at, created_at)) WHERE outcome = 'pending';

-- The prune of settled deliveries past the events' retention reads them oldest first.
CREATE INDEX webhook_deliveries_settled ON webhook_deliveries (updated_at) WHERE outcome <> 'pending';
