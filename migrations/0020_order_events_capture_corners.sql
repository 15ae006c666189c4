-- Capture, exact in three corners (docs/design/order-events.md#capture):
--
-- 1. An insert that changes nothing (INSERT OR IGNORE that is ignored, an
--    upsert's DO NOTHING) fires no AFTER INSERT, so the row 0014 kept in
--    order_replaced stayed, and a later insert whose id SQLite assigns (NEW.id
--    is not known before it) met it as the order it replaced. Each BEFORE
--    trigger now starts by emptying the table: it holds one statement's row.
-- 2. UPDATE OR REPLACE onto an existing id deletes that order without a
--    delete trigger (recursive triggers off): a BEFORE UPDATE keeps it, and
--    the update's trigger records its order.deleted before the update itself.
-- 3. With recursive_triggers on, a REPLACE fires the delete trigger too. The
--    delete's event is always written and its sequence noted beside the kept
--    row; the insert's (or update's) trigger, finding it, removes it in the
--    same transaction (no reader sees it) and records the one event the
--    statement amounts to. A removed event leaves a gap in the sequence, as
--    a raised sequence does: cursors are positions, never counts.
ALTER TABLE order_replaced ADD COLUMN deleted_seq INTEGER;

DROP TRIGGER order_events_before_insert;
CREATE TRIGGER order_events_before_insert BEFORE INSERT ON orders
BEGIN
  DELETE FROM order_replaced;
  INSERT INTO order_replaced (id, pet_id, quantity, ship_date, status, complete, created_at, updated_at, cancelled_at)
    SELECT id, pet_id, quantity, ship_date, status, complete, created_at, updated_at, cancelled_at FROM orders WHERE id = NEW.id;
END;

CREATE TRIGGER order_events_before_update BEFORE UPDATE ON orders
BEGIN
  DELETE FROM order_replaced;
  INSERT INTO order_replaced (id, pet_id, quantity, ship_date, status, complete, created_at, updated_at, cancelled_at)
    SELECT id, pet_id, quantity, ship_date, status, complete, created_at, updated_at, cancelled_at FROM orders WHERE id = NEW.id AND NEW.id IS NOT OLD.id;
END;

DROP TRIGGER order_events_on_delete;
CREATE TRIGGER order_events_on_delete AFTER DELETE ON orders
BEGIN
  INSERT INTO order_events (type, created_at, order_id, order_row)
  VALUES (
    'order.deleted', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), OLD.id,
    json_object('id', CAST(OLD.id AS TEXT), 'petId', CAST(OLD.pet_id AS TEXT), 'quantity', CAST(OLD.quantity AS TEXT),
      'shipDate', CAST(OLD.ship_date AS TEXT), 'status', OLD.status, 'complete', OLD.complete)
  );
  -- Only a REPLACE (recursive triggers on) finds its row kept: its statement's own trigger settles what it was.
  UPDATE order_replaced SET deleted_seq = (SELECT max(seq) FROM order_events) WHERE id = OLD.id;
END;

DROP TRIGGER order_events_on_insert;
CREATE TRIGGER order_events_on_insert AFTER INSERT ON orders
BEGIN
  DELETE FROM order_events WHERE seq = (SELECT deleted_seq FROM order_replaced WHERE id = NEW.id);

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

  DELETE FROM order_replaced;
END;

-- One trigger for the update and the order its new id replaced, so nothing depends on the order SQLite fires triggers in.
DROP TRIGGER order_events_on_update;
CREATE TRIGGER order_events_on_update AFTER UPDATE ON orders
BEGIN
  INSERT INTO order_events (type, created_at, order_id, order_row)
  SELECT
    'order.deleted', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), GONE.id,
    json_object('id', CAST(GONE.id AS TEXT), 'petId', CAST(GONE.pet_id AS TEXT), 'quantity', CAST(GONE.quantity AS TEXT),
      'shipDate', CAST(GONE.ship_date AS TEXT), 'status', GONE.status, 'complete', GONE.complete)
  FROM order_replaced AS GONE
  WHERE GONE.id = NEW.id AND GONE.deleted_seq IS NULL;

  INSERT INTO order_events (type, created_at, order_id, order_row, previous_row, changed)
  SELECT
    CASE WHEN NEW.status IS NOT OLD.status AND NEW.status IN ('cancelled', 'shipped', 'delivered') THEN 'order.' || NEW.status ELSE 'order.updated' END,
    strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id,
    json_object('id', CAST(NEW.id AS TEXT), 'petId', CAST(NEW.pet_id AS TEXT), 'quantity', CAST(NEW.quantity AS TEXT),
      'shipDate', CAST(NEW.ship_date AS TEXT), 'status', NEW.status, 'complete', NEW.complete),
    json_object('id', CAST(OLD.id AS TEXT), 'petId', CAST(OLD.pet_id AS TEXT), 'quantity', CAST(OLD.quantity AS TEXT),
      'shipDate', CAST(OLD.ship_date AS TEXT), 'status', OLD.status, 'complete', OLD.complete),
    rtrim(
      CASE WHEN NEW.id IS NOT OLD.id THEN 'id,' ELSE '' END
      || CASE WHEN NEW.pet_id IS NOT OLD.pet_id THEN 'petId,' ELSE '' END
      || CASE WHEN NEW.quantity IS NOT OLD.quantity THEN 'quantity,' ELSE '' END
      || CASE WHEN NEW.ship_date IS NOT OLD.ship_date THEN 'shipDate,' ELSE '' END
      || CASE WHEN NEW.status IS NOT OLD.status THEN 'status,' ELSE '' END
      || CASE WHEN NEW.complete IS NOT OLD.complete THEN 'complete,' ELSE '' END,
      ','
    )
  WHERE NEW.id IS NOT OLD.id OR NEW.pet_id IS NOT OLD.pet_id OR NEW.quantity IS NOT OLD.quantity
    OR NEW.ship_date IS NOT OLD.ship_date OR NEW.status IS NOT OLD.status OR NEW.complete IS NOT OLD.complete
    OR NEW.created_at IS NOT OLD.created_at OR NEW.updated_at IS NOT OLD.updated_at OR NEW.cancelled_at IS NOT OLD.cancelled_at;

  DELETE FROM order_replaced;
END;
