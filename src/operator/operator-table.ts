/** The operators' table (docs/operations.md#operators): its statements, for the worker and the keys command. */

/** A name as it appears in the audit: a person's handle or email, never blank, never with spaces. */
export const OPERATOR_NAME = /^[A-Za-z0-9][A-Za-z0-9._@+-]{0,63}$/;

export interface OperatorRow {
  name: string;
  created_at: string;
  created_by: string;
  revoked_at: string | null;
  revoked_by: string | null;
}

/** A new operator: its name back, or no row for a name taken before (revoked or not) or a digest already stored. */
export const INSERT_OPERATOR =
  "INSERT INTO operators (name, token_digest, created_at, created_by) VALUES (?1, ?2, ?3, ?4) ON CONFLICT DO NOTHING " +
  "RETURNING name";
/** Revokes a live operator; changes nothing for one revoked already or unknown. */
export const REVOKE_OPERATOR =
  "UPDATE operators SET revoked_at = ?2, revoked_by = ?3 WHERE name = ?1 AND revoked_at IS NULL";
export const LIST_OPERATORS =
  "SELECT name, created_at, created_by, revoked_at, revoked_by FROM operators ORDER BY name";
export const OPERATOR_BY_NAME =
  "SELECT name, created_at, created_by, revoked_at, revoked_by FROM operators WHERE name = ?1";
/** The live operator a token's digest names. */
export const LIVE_OPERATOR_BY_DIGEST = "SELECT name FROM operators WHERE token_digest = ?1 AND revoked_at IS NULL";
/** A live operator by name (an operator's console session names its operator). */
export const LIVE_OPERATOR_BY_NAME = "SELECT name FROM operators WHERE name = ?1 AND revoked_at IS NULL";
