-- A key revoked as leaked ends what it started (docs/api.md#what-a-leak-ends):
-- every webhook endpoint it made, or whose URL, secret or types it last
-- changed, is disabled by the service naming the key; its owner enables it
-- again only by confirming its URL. NULL: not disabled for a leak.
ALTER TABLE webhook_endpoints ADD COLUMN disabled_for_leak TEXT;
-- The keys a leaked key made (its rotations) are found by who made them.
CREATE INDEX key_events_by_actor ON key_events (actor, operation);
-- Its console sessions and unused sign-in links end with it.
CREATE INDEX console_sessions_by_key ON console_sessions (key_id);
CREATE INDEX console_links_by_key ON console_links (key_id);
