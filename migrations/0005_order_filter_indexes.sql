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
-- the offset; upper() because RFC 3339 allows a lower-case t and z), its
-- fraction cut to the millisecond as src/lib/date-time.ts cuts it (SQLite
-- alone would round it). Only for a value the write guards would accept
-- (migrations/0002, the same rule): NULL otherwise, so a legacy 'now', a date
-- without a zone or a number matches no range, and never aborts this
-- migration ('now' is not deterministic, which a generated column refuses).
-- Generated, so every writer keeps it right for free.
--
-- The one edit ever made to an applied migration's text: its first version,
-- julianday(upper(ship_date)), could not apply to a table holding such a
-- legacy row at all, and matched dates without a zone. Databases that applied
-- it get this definition from 0007, which replaces the column.
ALTER TABLE orders ADD COLUMN ship_instant REAL GENERATED ALWAYS AS (
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
) VIRTUAL;
CREATE INDEX orders_by_ship_instant ON orders (ship_instant, id);
