-- Ordered endpoints (docs/api.md#webhook-endpoints): `fifo` receives one delivery at a time, in event order, a failing
-- one holding the later ones behind it; `concurrent` (every endpoint before this) up to six at once, in no order.
ALTER TABLE webhook_endpoints ADD COLUMN ordering TEXT NOT NULL DEFAULT 'concurrent'
  CHECK (ordering IN ('concurrent', 'fifo'));
