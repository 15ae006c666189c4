-- Notices of a failing endpoint (docs/api.md#failing-endpoints): webhook_endpoint.failing once a failing period has
-- lasted WEBHOOK_FAILING_AFTER, webhook_endpoint.disabled when the service disables it. One of each type a period
-- (the UNIQUE key: a lane that makes one again after a crash makes nothing new), delivered to the budget's other
-- endpoints that name the type, as deliveries keyed by the negated id in their lanes. Ids of their own, never the
-- order feed's sequence. `endpoint` is the endpoint's JSON as the notice carries it. Kept NOTICE_RETENTION_MS.
CREATE TABLE endpoint_notices (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  budget TEXT NOT NULL,
  endpoint_id TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('webhook_endpoint.failing', 'webhook_endpoint.disabled')),
  period_from TEXT NOT NULL,
  created_at TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  UNIQUE (endpoint_id, type, period_from)
);
CREATE INDEX endpoint_notices_by_age ON endpoint_notices (created_at);
