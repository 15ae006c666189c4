-- An endpoint's delivery health as operators list it (docs/operations.md#the-operators-console): since when its
-- deliveries fail (NULL while they succeed) and when one last succeeded. Its lane writes them on a change of state
-- and, while it delivers, at most every 10 minutes: a few writes an hour an endpoint, never one a delivery.
ALTER TABLE webhook_endpoints ADD COLUMN failing_since TEXT;
ALTER TABLE webhook_endpoints ADD COLUMN last_delivered_at TEXT;
