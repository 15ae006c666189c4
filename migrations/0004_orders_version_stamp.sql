-- The list's version gains a random stamp, changed by every write. A version
-- number alone can come back: a D1 Time Travel restore rewinds the counter,
-- and the writes after it count up through the same numbers with other data.
-- Cached lists and ETags are keyed by the whole tag (README, "Orders"), so a
-- rewound database can never be answered with a list or a 304 from before.
ALTER TABLE orders_version ADD COLUMN stamp TEXT NOT NULL DEFAULT '';
UPDATE orders_version SET stamp = lower(hex(randomblob(6)));

DROP TRIGGER orders_version_on_insert;
DROP TRIGGER orders_version_on_update;
DROP TRIGGER orders_version_on_delete;

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
