-- When an endpoint's URL last changed (docs/api.md#webhook-endpoints): a
-- recovery of deliveries that failed before then would send them to a host
-- they were never meant for, so it asks the owner to confirm the URL. NULL:
-- unchanged since it was made.
ALTER TABLE webhook_endpoints ADD COLUMN url_changed_at TEXT;
