-- Write guards on orders (README, "Data model"). Other systems write this
-- table, and SQLite would store text in an INTEGER column; these triggers
-- refuse such writes at the source with a message that names the column.
-- Triggers, not a table rebuild: migrations only add. The API's list applies
-- the same rules when it reads (src/lib/order-json.ts), so rows written before
-- these triggers existed still list, without the value that does not fit.
--
-- id needs no guard: it is the rowid, and SQLite refuses anything but an
-- integer there ("datatype mismatch"). The column's INTEGER affinity has
-- already turned '42' and 42.0 into 42 by the time a BEFORE trigger runs.
--
-- ship_date must be an RFC 3339 date-time, as src/lib/date-time.ts reads it:
-- YYYY-MM-DDTHH:MM:SS, optional fraction, then Z or +hh:mm / -hh:mm.
-- date(..., '+0 days') normalises impossible days (2026-02-30 becomes
-- 2026-03-02), so comparing it with the written day checks the calendar.
-- Every part of the rule is NULL-free: a NULL would silently let a value by.
-- SQLite has no functions to share a rule between an insert and an update
-- trigger, so the rule is one trigger on a table that never holds a row:
-- both write a row to it, and the rule either refuses it (and with it the
-- write to orders) or drops it (RAISE(IGNORE), which ends only that insert).
-- D1 caps GLOB patterns at 50 bytes, so the shape is checked in two parts.

CREATE TABLE orders_ship_date_rule (ship_date);

CREATE TRIGGER orders_ship_date_rule_check BEFORE INSERT ON orders_ship_date_rule
BEGIN
  SELECT CASE
    WHEN s IS NOT NULL AND NOT (
      typeof(s) = 'text'
      AND substr(s, 1, 10) GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'
      AND substr(s, 11, 9) GLOB '[Tt][0-2][0-9]:[0-5][0-9]:[0-5][0-9]'
      AND date(substr(s, 1, 10), '+0 days') IS substr(s, 1, 10)
      AND substr(s, 12, 2) <= '23'
      -- In UTC still within the four-digit years (0000-01-01T00:00:00+01:00 is not).
      AND coalesce(datetime(upper(s)), '') GLOB '[0-9][0-9][0-9][0-9]-*'
      AND (
        substr(s, 20) IN ('Z', 'z')
        OR (substr(s, 20) GLOB '[+-][0-2][0-9]:[0-5][0-9]' AND substr(s, 21, 2) <= '23')
        OR (
          substr(s, 20) GLOB '.[0-9]*'
          AND (
            ltrim(substr(s, 21), '0123456789') IN ('Z', 'z')
            OR (ltrim(substr(s, 21), '0123456789') GLOB '[+-][0-2][0-9]:[0-5][0-9]'
                AND substr(ltrim(substr(s, 21), '0123456789'), 2, 2) <= '23')
          )
        )
      )
    )
    THEN RAISE(ABORT, 'orders.ship_date must be NULL or an RFC 3339 date-time such as 2026-11-02T09:00:00Z')
    ELSE RAISE(IGNORE)
  END
  FROM (SELECT NEW.ship_date AS s);
END;

CREATE TRIGGER orders_guard_insert BEFORE INSERT ON orders
BEGIN
  SELECT RAISE(ABORT, 'orders.pet_id must be NULL or an integer')
  WHERE typeof(NEW.pet_id) NOT IN ('integer', 'null');
  SELECT RAISE(ABORT, 'orders.quantity must be NULL or an integer between -9007199254740991 and 9007199254740991')
  WHERE typeof(NEW.quantity) NOT IN ('integer', 'null') OR abs(NEW.quantity) > 9007199254740991;
  INSERT INTO orders_ship_date_rule VALUES (NEW.ship_date);
END;

-- Updates are checked only for the columns they change: a cancel of a row
-- that holds a bad value from before these triggers must still succeed.
CREATE TRIGGER orders_guard_update_pet_id BEFORE UPDATE OF pet_id ON orders
WHEN NEW.pet_id IS NOT OLD.pet_id AND typeof(NEW.pet_id) NOT IN ('integer', 'null')
BEGIN
  SELECT RAISE(ABORT, 'orders.pet_id must be NULL or an integer');
END;

CREATE TRIGGER orders_guard_update_quantity BEFORE UPDATE OF quantity ON orders
WHEN NEW.quantity IS NOT OLD.quantity
  AND (typeof(NEW.quantity) NOT IN ('integer', 'null') OR abs(NEW.quantity) > 9007199254740991)
BEGIN
  SELECT RAISE(ABORT, 'orders.quantity must be NULL or an integer between -9007199254740991 and 9007199254740991');
END;

CREATE TRIGGER orders_guard_update_ship_date BEFORE UPDATE OF ship_date ON orders
WHEN NEW.ship_date IS NOT OLD.ship_date
BEGIN
  INSERT INTO orders_ship_date_rule VALUES (NEW.ship_date);
END;
