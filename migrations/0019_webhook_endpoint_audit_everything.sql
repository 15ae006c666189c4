-- Every owner's action on a webhook endpoint is audited (docs/api.md#webhook-endpoints),
-- as every key operation is: making and deleting an endpoint, retrying one
-- delivery and sending a test event join the changes, rotations and
-- recoveries. SQLite cannot change a CHECK: the audit table is made again
-- with the rows it had, ids kept; nothing but the CHECK changes.
CREATE TABLE webhook_endpoint_events_0019 (
  id INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL UNIQUE,
  at TEXT NOT NULL,
  operation TEXT NOT NULL CHECK (operation IN ('create', 'delete', 'disable', 'enable', 'update', 'rotate_secret', 'recover', 'retry', 'test')),
  endpoint_id TEXT NOT NULL,
  changes TEXT NOT NULL,
  actor TEXT NOT NULL,
  outcome TEXT CHECK (outcome IN ('unknown'))
);
INSERT INTO webhook_endpoint_events_0019 (id, event_id, at, operation, endpoint_id, changes, actor, outcome)
  SELECT id, event_id, at, operation, endpoint_id, changes, actor, outcome FROM webhook_endpoint_events;
DROP TABLE webhook_endpoint_events;
ALTER TABLE webhook_endpoint_events_0019 RENAME TO webhook_endpoint_events;
CREATE INDEX webhook_endpoint_events_by_endpoint ON webhook_endpoint_events (endpoint_id, id);
