-- Webhook endpoints changed by their owners (docs/api.md#webhook-endpoints):
-- the audit of endpoint actions takes the owner's updates, secret
-- rotations and recoveries besides the operator's disabling; an endpoint remembers who
-- disabled it, so an owner may enable again what it or the service disabled,
-- not what an operator did; and a rotated secret's predecessor, which signs
-- deliveries beside it until the overlap ends.
-- SQLite cannot change a CHECK: the audit table is made again with the rows
-- it had, ids kept (the one migration besides 0005 that does more than add:
-- nothing but the CHECK changes).
CREATE TABLE webhook_endpoint_events_0016 (
  id INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL UNIQUE,
  at TEXT NOT NULL,
  operation TEXT NOT NULL CHECK (operation IN ('disable', 'enable', 'update', 'rotate_secret', 'recover')),
  endpoint_id TEXT NOT NULL,
  changes TEXT NOT NULL,
  actor TEXT NOT NULL,
  outcome TEXT CHECK (outcome IN ('unknown'))
);
INSERT INTO webhook_endpoint_events_0016 (id, event_id, at, operation, endpoint_id, changes, actor, outcome)
  SELECT id, event_id, at, operation, endpoint_id, changes, actor, outcome FROM webhook_endpoint_events;
DROP TABLE webhook_endpoint_events;
ALTER TABLE webhook_endpoint_events_0016 RENAME TO webhook_endpoint_events;
CREATE INDEX webhook_endpoint_events_by_endpoint ON webhook_endpoint_events (endpoint_id, id);

-- Who disabled the endpoint: 'operator', 'owner' or 'service' (every attempt
-- failed for the schedule's span, or the receiver answered 410 Gone).
ALTER TABLE webhook_endpoints ADD COLUMN disabled_by TEXT CHECK (disabled_by IN ('operator', 'owner', 'service'));
-- An operator's disabling is known by its audit row (the reason kept may be an earlier one).
UPDATE webhook_endpoints SET disabled_by = CASE
    WHEN EXISTS (SELECT 1 FROM webhook_endpoint_events e WHERE e.endpoint_id = webhook_endpoints.id AND e.operation = 'disable') THEN 'operator'
    ELSE 'service' END
  WHERE status = 'disabled';

-- The secret a rotation replaced, sealed as the secret is, and until when
-- deliveries are signed with it too (Standard Webhooks: space-separated
-- signatures in webhook-signature).
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_sealed TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN previous_secret_until TEXT;

-- An owner's recovery reads its endpoint's failed deliveries in event order.
CREATE INDEX webhook_deliveries_failed ON webhook_deliveries (endpoint_id, event_seq) WHERE outcome = 'failed';
