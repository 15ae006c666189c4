-- The feed's head when a disabled endpoint was last enabled again (docs/design/order-events.md#lanes): what its lane
-- had not sent by then is failed, for its owner to recover, and never sent unasked.
ALTER TABLE webhook_endpoints ADD COLUMN resumed_seq INTEGER;
