-- Each attempt of a webhook delivery (docs/api.md#webhook-endpoints): when,
-- the receiver's status (null: no answer), how long it took, the start of its
-- answer or what went wrong, so an endpoint's owner can see why a delivery
-- fails without a log of its own. Kept as long as the deliveries (30 days),
-- pruned by the daily cron with them.
CREATE TABLE webhook_attempts (
  id INTEGER PRIMARY KEY,
  delivery_id TEXT NOT NULL,
  endpoint_id TEXT NOT NULL,
  at TEXT NOT NULL,
  status INTEGER,
  duration_ms INTEGER NOT NULL,
  response TEXT,
  error TEXT
);
CREATE INDEX webhook_attempts_by_delivery ON webhook_attempts (endpoint_id, delivery_id, id);
CREATE INDEX webhook_attempts_by_age ON webhook_attempts (at);
