-- The orders table is the contract with whatever places and ships orders
-- (CONTRACT section 3): columns may be added, never renamed.
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
);

CREATE TABLE pets (
  id INTEGER PRIMARY KEY,
  name TEXT NOT NULL,
  status TEXT
);

-- The list's ETag is this row: any write to orders, by this API or by the
-- systems that place and ship orders, bumps the version, so revalidation is a
-- single-row read instead of hashing the whole table. The random epoch keeps
-- ETags from a rebuilt database from colliding with old ones.
CREATE TABLE orders_version (
  singleton INTEGER PRIMARY KEY CHECK (singleton = 1),
  epoch TEXT NOT NULL,
  version INTEGER NOT NULL
);
INSERT INTO orders_version (singleton, epoch, version) VALUES (1, lower(hex(randomblob(6))), 0);

CREATE TRIGGER orders_version_on_insert AFTER INSERT ON orders
BEGIN
  UPDATE orders_version SET version = version + 1 WHERE singleton = 1;
END;

CREATE TRIGGER orders_version_on_update AFTER UPDATE ON orders
BEGIN
  UPDATE orders_version SET version = version + 1 WHERE singleton = 1;
END;

CREATE TRIGGER orders_version_on_delete AFTER DELETE ON orders
BEGIN
  UPDATE orders_version SET version = version + 1 WHERE singleton = 1;
END;
