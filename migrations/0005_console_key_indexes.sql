-- Nothing looks console sessions or sign-in links up by their key: a revoked key's are refused by its account
-- (docs/api.md#what-a-leak-ends), so these indexes only cost each write.
DROP INDEX console_sessions_by_key;
DROP INDEX console_links_by_key;
