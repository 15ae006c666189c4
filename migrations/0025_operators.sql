-- Operators by name (docs/operations.md#operators): each with a token of its
-- own, of which only the SHA-256 is kept, so the audit says who acted and a
-- person who leaves is revoked alone. In D1, not KV: a revocation must hold
-- everywhere at once, and KV takes up to a minute to spread one; the operator
-- API's few requests read the primary. A revoked operator's row stays, so its
-- name is never given to someone else and the audit's names stay unambiguous.
CREATE TABLE operators (
  name TEXT PRIMARY KEY,
  token_digest TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  created_by TEXT NOT NULL,
  revoked_at TEXT,
  revoked_by TEXT
);
