/** Operators' sign-in links (docs/operations.md#the-operators-console): where one leads, how long, its statements. */

/** Where the operators' console lives (its page: console/operator-console-page.ts). */
export const OPERATOR_CONSOLE_PATH = "/operator";

/** How long a link works. */
export const OPERATOR_LINK_SECONDS = 15 * 60;

/** A link's row: only its token's SHA-256 is kept. */
export const INSERT_OPERATOR_LINK =
  "INSERT INTO operator_links (token_hash, operator, created_at, expires_at, created_by) VALUES (?1, ?2, ?3, ?4, ?5)";

/** Uses a link once (one guarded UPDATE: of two tries at once only one signs in): whom it was made for, and by. */
export const REDEEM_OPERATOR_LINK =
  "UPDATE operator_links SET used_at = ?2 WHERE token_hash = ?1 AND used_at IS NULL AND expires_at > ?2 RETURNING " +
  "operator, created_by";

/** Links a day past their end (the cron): bound to that instant. */
export const PRUNE_OPERATOR_LINKS = "DELETE FROM operator_links WHERE expires_at < ?1";
