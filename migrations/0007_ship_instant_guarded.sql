-- shipDate ranges read only what the write guards accept, to the millisecond
-- as the list writes it (docs/design/order-list.md#v2-pages): the definition
-- 0005 now has, for databases that applied its first version (which matched
-- dates without a zone and numbers, and rounded fractions where the list cuts
-- them). A page with a range no longer reads through an index on the ship
-- date (it scans its equality index in id order, a bounded number of rows),
-- so the index goes, and with it its cost on every write.
DROP INDEX orders_by_ship_instant;
ALTER TABLE orders DROP COLUMN ship_instant;
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
