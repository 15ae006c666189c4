-- The slow lane (docs/design/order-events.md#faults): until this instant an
-- endpoint's deliveries skip the fast lane, whose receivers get 2 s, and go
-- to the slow lane's queue, where they get the full 10 s. Set when the
-- endpoint's receiver let a fast-lane attempt run out; null otherwise.
ALTER TABLE webhook_endpoints ADD COLUMN slow_until TEXT;
