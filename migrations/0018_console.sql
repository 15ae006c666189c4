-- The console (docs/api.md#the-console): single-use sign-in links an
-- operator makes, and the sessions a key or a link opened.
-- The key audit takes the console's operations: a link made (by an operator)
-- and a session opened or ended (by the key's holder). SQLite cannot change a
-- CHECK: the table is made again with the rows it had, ids kept; nothing but
-- the CHECK changes.
CREATE TABLE key_events_0018 (
  id INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  operation TEXT NOT NULL CHECK (operation IN ('create', 'update', 'rotate', 'revoke', 'unban', 'console_link', 'console_sign_in', 'console_sign_out')),
  key_id TEXT NOT NULL,
  changes TEXT NOT NULL,
  actor TEXT NOT NULL,
  event_id TEXT,
  outcome TEXT CHECK (outcome IS NULL OR outcome = 'unknown')
);
INSERT INTO key_events_0018 (id, at, operation, key_id, changes, actor, event_id, outcome)
  SELECT id, at, operation, key_id, changes, actor, event_id, outcome FROM key_events;
DROP TABLE key_events;
ALTER TABLE key_events_0018 RENAME TO key_events;
CREATE INDEX key_events_by_key ON key_events (key_id, id);
CREATE UNIQUE INDEX key_events_event_id ON key_events (event_id);

-- A link's token is never stored, only its SHA-256; used_at is set by the one
-- guarded UPDATE that redeems it, so a link opens one session at most.
CREATE TABLE console_links (
  token_hash TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  created_by TEXT NOT NULL,
  used_at TEXT
);

-- A session's cookie is sealed and carries its id; the row is what sign-out
-- ends everywhere at once. Kept a day past expiry, then pruned daily.
CREATE TABLE console_sessions (
  id TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  budget TEXT NOT NULL,
  via TEXT NOT NULL CHECK (via IN ('key', 'link')),
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  ended_at TEXT
);
CREATE INDEX console_sessions_by_expiry ON console_sessions (expires_at);
CREATE INDEX console_links_by_expiry ON console_links (expires_at);
