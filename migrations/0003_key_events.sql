-- The audit of key operations (README, "API keys"): one row for every create,
-- update, rotate, revoke and unban, whoever made it. Never a key or a hash.
CREATE TABLE key_events (
  id INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  operation TEXT NOT NULL CHECK (operation IN ('create', 'update', 'rotate', 'revoke', 'unban')),
  key_id TEXT NOT NULL,
  -- JSON: what changed (plan, limits, name, scopes, expiry, the key a rotation made).
  changes TEXT NOT NULL,
  -- Who: the operator token's name for the operator API, `cli` for npm run keys.
  actor TEXT NOT NULL
);

CREATE INDEX key_events_by_key ON key_events (key_id, id);
