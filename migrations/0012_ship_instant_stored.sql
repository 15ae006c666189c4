-- A stored copy of ship_instant (docs/design/order-list.md#v2-pages). The
-- VIRTUAL column of 0007 stays the one definition of a ship date's instant,
-- but a range page that compares it parses every row it reads: the bench's
-- walk of 100,000 orders with a range paid nearly a quarter of its time there. A range
-- now compares this plain number; the parse moves to the writes that change
-- it. A STORED column cannot be added to a table, and migrations only add
-- (0002), so triggers keep the copy: after any write that leaves it different
-- from ship_instant (a new order, a new ship date, or another system writing
-- the copy itself) they set it again. That second write changes neither an
-- Order's field nor its events (0008 lists the columns that make an event);
-- the list's version, bumped by the first write, is bumped once more.
ALTER TABLE orders ADD COLUMN ship_instant_stored REAL;

UPDATE orders SET ship_instant_stored = ship_instant;

CREATE TRIGGER orders_ship_instant_on_insert AFTER INSERT ON orders
WHEN NEW.ship_instant_stored IS NOT NEW.ship_instant
BEGIN
  UPDATE orders SET ship_instant_stored = ship_instant WHERE id = NEW.id;
END;

CREATE TRIGGER orders_ship_instant_on_update AFTER UPDATE ON orders
WHEN NEW.ship_instant_stored IS NOT NEW.ship_instant
BEGIN
  UPDATE orders SET ship_instant_stored = ship_instant WHERE id = NEW.id;
END;
