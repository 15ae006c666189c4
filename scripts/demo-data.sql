-- Demo data for local development, loaded by `npm start`. INSERT OR IGNORE
-- makes it safe to load again: rows a developer changed (say, cancelled) stay
-- as they are.
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 36)
INSERT OR IGNORE INTO orders (id, pet_id, quantity, ship_date, status, complete, created_at, updated_at)
SELECT
  i,
  1 + i % 6,
  1 + i % 3,
  CASE WHEN i % 9 = 0 THEN NULL ELSE strftime('%Y-%m-%dT%H:%M:%SZ', '2026-11-01T09:00:00Z', '+' || i || ' days') END,
  CASE i % 4 WHEN 1 THEN 'pending' WHEN 2 THEN 'shipped' WHEN 3 THEN 'delivered' ELSE 'cancelled' END,
  CASE WHEN i % 4 = 3 THEN 1 ELSE 0 END,
  '2026-10-01T00:00:00Z',
  '2026-10-01T00:00:00Z'
FROM n;

-- The largest int64 id, to show ids come back exactly.
INSERT OR IGNORE INTO orders (id, pet_id, quantity, ship_date, status, complete, created_at, updated_at)
VALUES (9223372036854775807, 9223372036854775807, 1, '2026-12-24T18:00:00Z', 'pending', 0,
        '2026-10-01T00:00:00Z', '2026-10-01T00:00:00Z');

INSERT OR IGNORE INTO pets (id, name, status) VALUES
  (1, 'Rex', 'available'),
  (2, 'Mittens', 'pending'),
  (3, 'Goldie', 'sold'),
  (4, 'Biscuit', 'available'),
  (5, 'Nibbles', 'available'),
  (6, 'Shadow', NULL);
