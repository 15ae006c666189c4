-- Order writes held after a D1 Time Travel restore (docs/operations.md#restoring-d1).
-- A restore rewinds the order events' sequence; an order written before it is
-- raised again would make an event whose id receivers have seen already, and
-- that its endpoints' lanes hold and never send. The webhook dispatcher, whose
-- own storage no restore rewinds, finds the sequence below what it handed out
-- and writes this row; raising the sequence deletes it. While it exists every
-- write to orders fails, this API's (503 with Retry-After) and every other
-- system's alike: refused, never lost without an event.
CREATE TABLE order_writes_hold (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  since TEXT NOT NULL,
  sequence INTEGER NOT NULL,
  handed_out INTEGER NOT NULL
);

CREATE TRIGGER order_writes_hold_insert BEFORE INSERT ON orders
WHEN EXISTS (SELECT 1 FROM order_writes_hold)
BEGIN
  SELECT RAISE(ABORT, 'order writes are held until the order event sequence is raised after a D1 restore');
END;

CREATE TRIGGER order_writes_hold_update BEFORE UPDATE ON orders
WHEN EXISTS (SELECT 1 FROM order_writes_hold)
BEGIN
  SELECT RAISE(ABORT, 'order writes are held until the order event sequence is raised after a D1 restore');
END;

CREATE TRIGGER order_writes_hold_delete BEFORE DELETE ON orders
WHEN EXISTS (SELECT 1 FROM order_writes_hold)
BEGIN
  SELECT RAISE(ABORT, 'order writes are held until the order event sequence is raised after a D1 restore');
END;
