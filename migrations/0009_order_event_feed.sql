-- The event feed's support (docs/design/order-events.md#the-feed). Where the pruned part of the feed ends:
-- every event up to pruned_through has been deleted, so a feed cursor before
-- it is 410 cursor_expired rather than a page that silently skips what was
-- pruned. The prune moves it in the same transaction as its delete; it only
-- grows.
CREATE TABLE order_event_retention (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  pruned_through INTEGER NOT NULL CHECK (pruned_through >= 0)
);
INSERT INTO order_event_retention (id, pruned_through) VALUES (1, 0);

-- The feed's pages filtered by type read each type's events in sequence
-- order from here, a page's worth at most, however rare the type.
CREATE INDEX order_events_by_type ON order_events (type, seq);
