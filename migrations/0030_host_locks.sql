-- Hosts an operator locked (docs/operations.md#webhooks): every endpoint on the
-- host is disabled as an operator's lock disables one, and no budget may point
-- an endpoint at any URL on it until the lock is lifted. The host is in the
-- normal form webhook URLs are kept in (lower-case, IDNs in ASCII, no
-- trailing dot). A lifted lock keeps its row, who locked and who lifted it:
-- the table is its own audit.
CREATE TABLE host_locks (
  host TEXT PRIMARY KEY,
  reason TEXT,
  locked_at TEXT NOT NULL,
  locked_by TEXT NOT NULL,
  lifted_at TEXT,
  lifted_by TEXT
);
