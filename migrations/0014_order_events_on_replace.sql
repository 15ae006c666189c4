-- Another system's INSERT OR REPLACE of an existing order (docs/design/order-events.md#capture).
-- SQLite's REPLACE deletes the old row without firing delete triggers (D1
-- runs with recursive triggers off), so 0008 saw only an insert: replacing a
-- pending order with a delivered one emitted order.created, and a client
-- following order.delivered missed it. The row an insert is about to replace
-- is kept here for the length of the statement; the insert's trigger reads
-- it and records the change it is, by the update's rules. An insert that
-- conflicts and is ignored (INSERT OR IGNORE) leaves its row here until that
-- id is inserted again: harmless, as each insert replaces it first.
CREATE TABLE order_replaced (
  id INTEGER PRIMARY KEY,
  pet_id INTEGER,
  quantity INTEGER,
  ship_date TEXT,
  status TEXT,
  complete INTEGER,
  created_at TEXT,
  updated_at TEXT,
  cancelled_at TEXT
);

CREATE TRIGGER order_events_before_insert BEFORE INSERT ON orders
BEGIN
  DELETE FROM order_replaced WHERE id = NEW.id;
  INSERT INTO order_replaced (id, pet_id, quantity, ship_date, status, complete, created_at, updated_at, cancelled_at)
    SELECT id, pet_id, quantity, ship_date, status, complete, created_at, updated_at, cancelled_at FROM orders WHERE id = NEW.id;
END;

-- One trigger for both cases, so nothing depends on the order SQLite fires triggers in.
DROP TRIGGER order_events_on_insert;
CREATE TRIGGER order_events_on_insert AFTER INSERT ON orders
BEGIN
  INSERT INTO order_events (type, created_at, order_id, order_row)
  SELECT
    'order.created', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id,
    json_object('id', CAST(NEW.id AS TEXT), 'petId', CAST(NEW.pet_id AS TEXT), 'quantity', CAST(NEW.quantity AS TEXT),
      'shipDate', CAST(NEW.ship_date AS TEXT), 'status', NEW.status, 'complete', NEW.complete)
  WHERE NOT EXISTS (SELECT 1 FROM order_replaced WHERE id = NEW.id);

  INSERT INTO order_events (type, created_at, order_id, order_row, previous_row, changed)
  SELECT
    CASE WHEN NEW.status IS NOT OLD.status AND NEW.status IN ('cancelled', 'shipped', 'delivered') THEN 'order.' || NEW.status ELSE 'order.updated' END,
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id,
    json_object('id', CAST(NEW.id AS TEXT), 'petId', CAST(NEW.pet_id AS TEXT), 'quantity', CAST(NEW.quantity AS TEXT),
      'shipDate', CAST(NEW.ship_date AS TEXT), 'status', NEW.status, 'complete', NEW.complete),
    json_object('id', CAST(OLD.id AS TEXT), 'petId', CAST(OLD.pet_id AS TEXT), 'quantity', CAST(OLD.quantity AS TEXT),
      'shipDate', CAST(OLD.ship_date AS TEXT), 'status', OLD.status, 'complete', OLD.complete),
    rtrim(
      CASE WHEN NEW.pet_id IS NOT OLD.pet_id THEN 'petId,' ELSE '' END
      || CASE WHEN NEW.quantity IS NOT OLD.quantity THEN 'quantity,' ELSE '' END
      || CASE WHEN NEW.ship_date IS NOT OLD.ship_date THEN 'shipDate,' ELSE '' END
      || CASE WHEN NEW.status IS NOT OLD.status THEN 'status,' ELSE '' END
      || CASE WHEN NEW.complete IS NOT OLD.complete THEN 'complete,' ELSE '' END,
      ','
    )
  FROM order_replaced AS OLD
  WHERE OLD.id = NEW.id AND (NEW.pet_id IS NOT OLD.pet_id OR NEW.quantity IS NOT OLD.quantity OR NEW.ship_date IS NOT OLD.ship_date
    OR NEW.status IS NOT OLD.status OR NEW.complete IS NOT OLD.complete OR NEW.created_at IS NOT OLD.created_at
    OR NEW.updated_at IS NOT OLD.updated_at OR NEW.cancelled_at IS NOT OLD.cancelled_at);

  DELETE FROM order_replaced WHERE id = NEW.id;
END;
