-- When a disabled endpoint was last enabled again (docs/api.md#failing-endpoints): its lane counts no failure from
-- before it toward a failing period.
ALTER TABLE webhook_endpoints ADD COLUMN enabled_at TEXT;
