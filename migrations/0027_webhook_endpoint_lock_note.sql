-- What an operator who locks (disables) a webhook endpoint tells its owner
-- (docs/operations.md#the-operators-console): shown to the owner after
-- "disabled by an operator", where the operator's name never is; cleared
-- when the endpoint is enabled again.
ALTER TABLE webhook_endpoints ADD COLUMN disabled_note TEXT;
