-- Webhook endpoints (docs/api.md#webhook-endpoints): where a budget's order
-- events are delivered, at most 10 a budget. The secret is kept sealed
-- (AES-GCM under the Workers secret WEBHOOK_SECRETS_KEY, bound to the id);
-- from_seq is the feed's head when the endpoint was made: it receives only
-- the events after it.
CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  budget TEXT NOT NULL,
  url TEXT NOT NULL,
  -- Comma-separated event types.
  types TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('enabled', 'disabled')),
  created_at TEXT NOT NULL,
  from_seq INTEGER NOT NULL,
  secret_sealed TEXT NOT NULL,
  disabled_at TEXT,
  -- Why: the operator's, or that every delivery failed for the retry schedule's span.
  disabled_reason TEXT
);
CREATE INDEX webhook_endpoints_by_budget ON webhook_endpoints (budget, created_at);

-- The audit of operator actions on endpoints, like key_events for keys
-- (docs/operations.md#operator-api): the row first, then the action.
CREATE TABLE webhook_endpoint_events (
  id INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL UNIQUE,
  at TEXT NOT NULL,
  operation TEXT NOT NULL CHECK (operation IN ('disable')),
  endpoint_id TEXT NOT NULL,
  changes TEXT NOT NULL,
  actor TEXT NOT NULL,
  outcome TEXT CHECK (outcome IN ('unknown'))
);
