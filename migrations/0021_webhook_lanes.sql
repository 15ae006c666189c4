-- Webhook deliveries leave the orders database (docs/design/order-events.md#lanes):
-- each endpoint's deliveries and attempts are kept by its lane, a Durable
-- Object with SQLite storage of its own, so a busy store's deliveries can
-- never fill the database whose every order write appends an event.
--
-- The dispatcher's mark moves here from its object's storage, so losing that
-- storage never sends every kept event again. It starts just before the
-- oldest event still pending delivery, so those are handed to the lanes
-- (events after it that were delivered already are sent again: at least
-- once, and receivers deduplicate by webhook-id), or at the feed's head.
CREATE TABLE webhook_dispatch (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  mark INTEGER NOT NULL CHECK (mark >= 0)
);
INSERT INTO webhook_dispatch (id, mark) VALUES (1, coalesce(
  (SELECT min(event_seq) - 1 FROM webhook_deliveries WHERE outcome = 'pending'),
  (SELECT coalesce(max(seq), 0) FROM order_events)
));

DROP TABLE webhook_attempts;
DROP TABLE webhook_deliveries;

-- The slow lane is gone with the queues: every endpoint has a lane of its own.
ALTER TABLE webhook_endpoints DROP COLUMN slow_until;

-- Deliveries a second at most to the endpoint (its owner's rateLimit); null: no limit but the lane's.
ALTER TABLE webhook_endpoints ADD COLUMN rate_limit INTEGER CHECK (rate_limit IS NULL OR rate_limit BETWEEN 1 AND 1000);

-- The owners' audit of endpoint actions is pruned by age (docs/design/order-events.md#retention).
CREATE INDEX webhook_endpoint_events_by_age ON webhook_endpoint_events (at);
