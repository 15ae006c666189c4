-- Which key last set each part of an endpoint a leaked key could aim (docs/api.md#what-a-leak-ends): its URL, its
-- secret, its types, kept on the endpoint's row, so what a leak ends never depends on how long the audit is kept.
ALTER TABLE webhook_endpoints ADD COLUMN url_set_by TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN secret_set_by TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN types_set_by TEXT;

-- Endpoints made before: from their audit, the last key to set each part (an operator's change names no key).
UPDATE webhook_endpoints SET
  url_set_by = (
    SELECT CASE WHEN e.actor LIKE 'key:%' THEN substr(e.actor, 5) END FROM webhook_endpoint_events AS e
    WHERE e.endpoint_id = webhook_endpoints.id
      AND (e.operation = 'create' OR (e.operation = 'update' AND json_extract(e.changes, '$.url') IS NOT NULL))
    ORDER BY e.id DESC LIMIT 1
  ),
  secret_set_by = (
    SELECT CASE WHEN e.actor LIKE 'key:%' THEN substr(e.actor, 5) END FROM webhook_endpoint_events AS e
    WHERE e.endpoint_id = webhook_endpoints.id AND e.operation IN ('create', 'rotate_secret')
    ORDER BY e.id DESC LIMIT 1
  ),
  types_set_by = (
    SELECT CASE WHEN e.actor LIKE 'key:%' THEN substr(e.actor, 5) END FROM webhook_endpoint_events AS e
    WHERE e.endpoint_id = webhook_endpoints.id
      AND (e.operation = 'create' OR (e.operation = 'update' AND json_extract(e.changes, '$.types') IS NOT NULL))
    ORDER BY e.id DESC LIMIT 1
  );
