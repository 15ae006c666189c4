-- Operators' console sessions and sign-in links (docs/operations.md#the-operators-console),
-- kept apart from the callers' (console_sessions, console_links): an operator's
-- session never stands for a key, nor a caller's for an operator. A session's
-- cookie is sealed and carries its id; the row is what sign-out ends everywhere
-- at once, and says who signed in, when and how. A link keeps only its
-- token's SHA-256. Both are kept a day past expiry, then pruned by the cron.
CREATE TABLE operator_sessions (
  id TEXT PRIMARY KEY,
  operator TEXT NOT NULL,
  via TEXT NOT NULL CHECK (via IN ('token', 'link')),
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  ended_at TEXT
);
CREATE INDEX operator_sessions_by_expiry ON operator_sessions (expires_at);

CREATE TABLE operator_links (
  token_hash TEXT PRIMARY KEY,
  operator TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  created_by TEXT NOT NULL,
  used_at TEXT
);
CREATE INDEX operator_links_by_expiry ON operator_links (expires_at);
