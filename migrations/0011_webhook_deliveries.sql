-- Webhook deliveries (docs/design/order-events.md#delivery): one row per
-- event and endpoint, made by the dispatcher before it enqueues the message
-- (INSERT OR IGNORE: a pass re-run after a crash adds nothing), brought up
-- to date by each attempt. The endpoint's deliveries list reads it newest
-- first.
CREATE TABLE webhook_deliveries (
  id TEXT PRIMARY KEY,
  endpoint_id TEXT NOT NULL,
  event_seq INTEGER NOT NULL,
  attempts INTEGER NOT NULL DEFAULT 0,
  -- The receiver's HTTP status of the last attempt; null before one, or when it gave none (a timeout, a refused connection).
  last_status INTEGER,
  last_error TEXT,
  next_attempt_at TEXT,
  outcome TEXT NOT NULL CHECK (outcome IN ('pending', 'delivered', 'failed')),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  UNIQUE (endpoint_id, event_seq)
);
CREATE INDEX webhook_deliveries_newest ON webhook_deliveries (endpoint_id, event_seq DESC);
