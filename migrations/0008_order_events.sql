-- Order events, captured at the source (docs/design/order-events.md): every
-- change to a row of orders, by this API or by any other system writing D1,
-- appends exactly one event in the same transaction; an update that changes
-- nothing appends nothing. AUTOINCREMENT: a sequence that only grows, never
-- reusing the number of an event pruned or rolled back, so a feed cursor is
-- never met by another event.
--
-- The rows keep each column as the list reads it (CAST ... AS TEXT: int64
-- digits exact, null when absent), never as JSON numbers: the Worker writes
-- the event with the list's schema-driven writer, so an event's order is
-- exactly the Order JSON of the list, the same values left out.
CREATE TABLE order_events (
  seq INTEGER PRIMARY KEY AUTOINCREMENT,
  type TEXT NOT NULL CHECK (type IN ('order.created', 'order.cancelled', 'order.shipped', 'order.delivered', 'order.updated', 'order.deleted')),
  created_at TEXT NOT NULL,
  order_id INTEGER NOT NULL,
  -- The order after the change (before it, for order.deleted).
  order_row TEXT NOT NULL,
  -- Updates only: the order before the change, and which of the Order's fields changed (comma-separated, maybe none).
  previous_row TEXT,
  changed TEXT
);
CREATE INDEX order_events_by_age ON order_events (created_at);

CREATE TRIGGER order_events_on_insert AFTER INSERT ON orders
BEGIN
  INSERT INTO order_events (type, created_at, order_id, order_row)
  VALUES (
    'order.created', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), NEW.id,
    json_object('id', CAST(NEW.id AS TEXT), 'petId', CAST(NEW.pet_id AS TEXT), 'quantity', CAST(NEW.quantity AS TEXT),
      'shipDate', CAST(NEW.ship_date AS TEXT), 'status', NEW.status, 'complete', NEW.complete)
  );
END;

-- Any column that changed, the table's own (updated_at, cancelled_at) too:
-- a change is an event. A status changed to cancelled, shipped or delivered
-- is that event's type; any other change is order.updated.
CREATE TRIGGER order_events_on_update AFTER UPDATE ON orders
WHEN NEW.id IS NOT OLD.id OR NEW.pet_id IS NOT OLD.pet_id OR NEW.quantity IS NOT OLD.quantity
  OR NEW.ship_date IS NOT OLD.ship_date OR NEW.status IS NOT OLD.status OR NEW.complete IS NOT OLD.complete
  OR NEW.created_at IS NOT OLD.created_at OR NEW.updated_at IS NOT OLD.updated_at OR NEW.cancelled_at IS NOT OLD.cancelled_at
BEGIN
  INSERT INTO order_events (type, created_at, order_id, order_row, previous_row, changed)
  VALUES (
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
  );
END;

CREATE TRIGGER order_events_on_delete AFTER DELETE ON orders
BEGIN
  INSERT INTO order_events (type, created_at, order_id, order_row)
  VALUES (
    'order.deleted', strftime('%Y-%m-%dT%H:%M:%fZ', 'now'), OLD.id,
    json_object('id', CAST(OLD.id AS TEXT), 'petId', CAST(OLD.pet_id AS TEXT), 'quantity', CAST(OLD.quantity AS TEXT),
      'shipDate', CAST(OLD.ship_date AS TEXT), 'status', OLD.status, 'complete', OLD.complete)
  );
END;
