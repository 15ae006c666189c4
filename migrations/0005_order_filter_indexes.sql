-- v2's filtered pages (docs/design/order-list.md#v2-pages): each page is a
-- keyset read, `id` after the cursor, in `id` order, LIMIT page size + 1. For
-- that to read about a page's rows whatever the table's size, every set of
-- equality filters needs an index that starts with exactly those columns and
-- then `id`: seven sets of status, pet_id and complete. Additive only.
CREATE INDEX orders_by_status ON orders (status, id);
CREATE INDEX orders_by_pet ON orders (pet_id, id);
CREATE INDEX orders_by_complete ON orders (complete, id);
CREATE INDEX orders_by_status_pet ON orders (status, pet_id, id);
CREATE INDEX orders_by_status_complete ON orders (status, complete, id);
CREATE INDEX orders_by_pet_complete ON orders (pet_id, complete, id);
CREATE INDEX orders_by_status_pet_complete ON orders (status, pet_id, complete, id);

-- shipDate ranges compare instants: `2026-01-01T01:00:00+01:00` is
-- `2026-01-01T00:00:00Z`. The ship date as a Julian day number (SQLite reads
-- the offset; upper() because RFC 3339 allows a lower-case t and z), to the
-- millisecond. NULL when there is no valid ship date, so such an order
-- matches no range. Generated, so every writer keeps it right for free.
ALTER TABLE orders ADD COLUMN ship_instant REAL GENERATED ALWAYS AS (julianday(upper(ship_date))) VIRTUAL;
CREATE INDEX orders_by_ship_instant ON orders (ship_instant, id);
