-- The schema before the first release, in one migration: what migrations 0001 to 0034 made on a
-- new database, with the rows they seeded. Their history is in git (git log -- migrations/). Every schema change from
-- here on is a new migration after this one, with its upgrade path tested (CONTRIBUTING.md#migrations).

CREATE TABLE orders (
  id INTEGER PRIMARY KEY,
  pet_id INTEGER,
  quantity INTEGER,
  ship_date TEXT,
  status TEXT NOT NULL DEFAULT 'pending'
    CHECK (status IN ('pending', 'shipped', 'delivered', 'cancelled')),
  complete INTEGER NOT NULL DEFAULT 0 CHECK (complete IN (0, 1)),
  created_at TEXT NOT NULL,
  updated_at TEXT NOT NULL,
  cancelled_at TEXT
, ship_instant REAL GENERATED ALWAYS AS (
  CASE WHEN typeof(ship_date) = 'text'
      AND substr(ship_date, 1, 10) GLOB '[0-9][0-9][0-9][0-9]-[0-9][0-9]-[0-9][0-9]'
      AND substr(ship_date, 11, 9) GLOB '[Tt][0-2][0-9]:[0-5][0-9]:[0-5][0-9]'
      AND substr(ship_date, 6, 2) BETWEEN '01' AND '12' AND substr(ship_date, 9, 2) >= '01'
      -- The calendar (no 2026-02-30), parsed only for days past the 28th: every month has those.
      AND (substr(ship_date, 9, 2) <= '28' OR date(substr(ship_date, 1, 10), '+0 days') IS substr(ship_date, 1, 10))
      AND substr(ship_date, 12, 2) <= '23'
      -- In UTC still within the four-digit years: only the first and last year can leave them.
      AND (substr(ship_date, 1, 4) NOT IN ('0000', '9999') OR coalesce(datetime(upper(ship_date)), '') GLOB '[0-9][0-9][0-9][0-9]-*')
      AND (
        substr(ship_date, 20) IN ('Z', 'z')
        OR (substr(ship_date, 20) GLOB '[+-][0-2][0-9]:[0-5][0-9]' AND substr(ship_date, 21, 2) <= '23')
        OR (
          substr(ship_date, 20) GLOB '.[0-9]*'
          AND (
            ltrim(substr(ship_date, 21), '0123456789') IN ('Z', 'z')
            OR (ltrim(substr(ship_date, 21), '0123456789') GLOB '[+-][0-2][0-9]:[0-5][0-9]'
                AND substr(ltrim(substr(ship_date, 21), '0123456789'), 2, 2) <= '23')
          )
        )
      )
    THEN julianday(upper(
      substr(ship_date, 1, 19) || CASE WHEN substr(ship_date, 20, 1) = '.'
        THEN '.' || substr(substr(ship_date, 21, length(ship_date) - 20 - length(ltrim(substr(ship_date, 21), '0123456789'))) || '000', 1, 3)
          || ltrim(substr(ship_date, 21), '0123456789')
        ELSE substr(ship_date, 20)
      END
    ))
  END
) VIRTUAL, ship_instant_stored REAL);

CREATE TABLE pets (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  status TEXT
);

CREATE TABLE orders_version (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  epoch TEXT NOT NULL,
  version INTEGER NOT NULL
, stamp TEXT NOT NULL DEFAULT '');
INSERT INTO orders_version (singleton, epoch, version, stamp) VALUES (1, lower(hex(randomblob(6))), 0, lower(hex(randomblob(6))));

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

CREATE TRIGGER orders_version_on_insert AFTER INSERT ON orders
BEGIN
  UPDATE orders_version SET version = version + 1, stamp = lower(hex(randomblob(6))) WHERE singleton = 1;
END;

CREATE TRIGGER orders_version_on_update AFTER UPDATE ON orders
BEGIN
  UPDATE orders_version SET version = version + 1, stamp = lower(hex(randomblob(6))) WHERE singleton = 1;
END;

CREATE TRIGGER orders_version_on_delete AFTER DELETE ON orders
BEGIN
  UPDATE orders_version SET version = version + 1, stamp = lower(hex(randomblob(6))) WHERE singleton = 1;
END;

CREATE INDEX orders_by_status ON orders (status, id);

CREATE INDEX orders_by_pet ON orders (pet_id, id);

CREATE INDEX orders_by_complete ON orders (complete, id);

CREATE INDEX orders_by_status_pet ON orders (status, pet_id, id);

CREATE INDEX orders_by_status_complete ON orders (status, complete, id);

CREATE INDEX orders_by_pet_complete ON orders (pet_id, complete, id);

CREATE INDEX orders_by_status_pet_complete ON orders (status, pet_id, complete, id);

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

CREATE TABLE order_event_retention (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  pruned_through INTEGER NOT NULL CHECK (pruned_through >= 0)
);
INSERT INTO order_event_retention (id, pruned_through) VALUES (1, 0);

CREATE INDEX order_events_by_type ON order_events (type, seq);

CREATE TABLE webhook_endpoints (
  id TEXT PRIMARY KEY,
  budget TEXT NOT NULL,
  url TEXT NOT NULL,
  -- Comma-separated event types.
  types TEXT NOT NULL,
  status TEXT NOT NULL CHECK (status IN ('enabled', 'disabled')),
  created_at TEXT NOT NULL,
  from_seq INTEGER NOT NULL,
  secret_sealed TEXT NOT NULL,
  disabled_at TEXT,
  -- Why: the operator's, or that every delivery failed for the retry schedule's span.
  disabled_reason TEXT
, disabled_by TEXT CHECK (disabled_by IN ('operator', 'owner', 'service')), previous_secret_sealed TEXT, previous_secret_until TEXT, rate_limit INTEGER CHECK (rate_limit IS NULL OR rate_limit BETWEEN 1 AND 1000), behind_after INTEGER, behind_retry_at INTEGER, behind_failures INTEGER NOT NULL DEFAULT 0, url_changed_at TEXT, disabled_note TEXT, failing_since TEXT, last_delivered_at TEXT, disabled_for_leak TEXT, public_key TEXT, ordering TEXT NOT NULL DEFAULT 'concurrent'
  CHECK (ordering IN ('concurrent', 'fifo')));

CREATE INDEX webhook_endpoints_by_budget ON webhook_endpoints (budget, created_at);

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
, deleted_seq INTEGER);

CREATE TABLE "key_events" (
  id INTEGER PRIMARY KEY,
  at TEXT NOT NULL,
  operation TEXT NOT NULL CHECK (operation IN ('create', 'update', 'rotate', 'revoke', 'unban', 'console_link', 'console_sign_in', 'console_sign_out')),
  key_id TEXT NOT NULL,
  changes TEXT NOT NULL,
  actor TEXT NOT NULL,
  event_id TEXT,
  outcome TEXT CHECK (outcome IS NULL OR outcome = 'unknown')
);

CREATE INDEX key_events_by_key ON key_events (key_id, id);

CREATE UNIQUE INDEX key_events_event_id ON key_events (event_id);

CREATE TABLE console_links (
  token_hash TEXT PRIMARY KEY,
  key_id TEXT NOT NULL,
  created_at TEXT NOT NULL,
  expires_at TEXT NOT NULL,
  created_by TEXT NOT NULL,
  used_at TEXT
);

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

CREATE TABLE "webhook_endpoint_events" (
  id INTEGER PRIMARY KEY,
  event_id TEXT NOT NULL UNIQUE,
  at TEXT NOT NULL,
  operation TEXT NOT NULL CHECK (operation IN ('create', 'delete', 'disable', 'enable', 'update', 'rotate_secret', 'recover', 'retry', 'test')),
  endpoint_id TEXT NOT NULL,
  changes TEXT NOT NULL,
  actor TEXT NOT NULL,
  outcome TEXT CHECK (outcome IN ('unknown'))
, budget TEXT);

CREATE INDEX webhook_endpoint_events_by_endpoint ON webhook_endpoint_events (endpoint_id, id);

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

CREATE TABLE webhook_dispatch (
  id INTEGER PRIMARY KEY CHECK (id = 1),
  mark INTEGER NOT NULL CHECK (mark >= 0)
);
INSERT INTO webhook_dispatch (id, mark) VALUES (1, 0);

CREATE INDEX webhook_endpoint_events_by_age ON webhook_endpoint_events (at);

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

CREATE TABLE operators (
  name TEXT PRIMARY KEY,
  token_digest TEXT NOT NULL UNIQUE,
  created_at TEXT NOT NULL,
  created_by TEXT NOT NULL,
  revoked_at TEXT,
  revoked_by TEXT
);

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

CREATE INDEX key_events_by_actor ON key_events (actor, operation);

CREATE INDEX console_sessions_by_key ON console_sessions (key_id);

CREATE INDEX console_links_by_key ON console_links (key_id);

CREATE TABLE host_locks (
  host TEXT PRIMARY KEY,
  reason TEXT,
  locked_at TEXT NOT NULL,
  locked_by TEXT NOT NULL,
  lifted_at TEXT,
  lifted_by TEXT
);

CREATE INDEX webhook_endpoint_events_by_budget ON webhook_endpoint_events (budget, at);

CREATE TABLE endpoint_notices (
  id INTEGER PRIMARY KEY AUTOINCREMENT,
  budget TEXT NOT NULL,
  endpoint_id TEXT NOT NULL,
  type TEXT NOT NULL CHECK (type IN ('webhook_endpoint.failing', 'webhook_endpoint.disabled')),
  period_from TEXT NOT NULL,
  created_at TEXT NOT NULL,
  endpoint TEXT NOT NULL,
  UNIQUE (endpoint_id, type, period_from)
);

CREATE INDEX endpoint_notices_by_age ON endpoint_notices (created_at);
