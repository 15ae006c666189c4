/**
 * The webhook_endpoints table (migrations/0001_baseline.sql): every statement that writes it, and the reads that share
 * its fragments. Owners' statements name the account, so no account reads or changes another's endpoint.
 */
import type { D1Queryable } from "../lib/d1-session";
import { HOST_LOCKED, hostLock } from "./host-lock-table";

/** Disabled by an operator: only an operator enables it again. */
const LOCKED = "status = 'disabled' AND disabled_by = 'operator'";

/** An endpoint as its lane sends to it: where, signed with what, how fast, for whom. */
export interface LaneEndpoint {
  id: string;
  budget: string;
  url: string;
  status: "enabled" | "disabled";
  secret_sealed: string;
  previous_secret_sealed: string | null;
  previous_secret_until: string | null;
  /** Deliveries a second at most (its owner's `rateLimit`); null: as fast as the lane goes. */
  rate_limit: number | null;
  /** The leaked key whose revocation disabled it; null otherwise. */
  disabled_for_leak: string | null;
  /** fifo: one delivery at a time, in event order; concurrent: LANE_CONCURRENCY at once, in no order. */
  ordering: EndpointOrdering;
  /** The event types it wants, comma-separated. */
  types: string;
  /** The feed's head when it was made: it gets only the events after. */
  from_seq: number;
  /** The feed's head when it was last enabled again: what its lane had not sent by then is failed. */
  resumed_seq: number | null;
  /** When it was last enabled again (ISO): no failure from before it counts toward a failing period. */
  enabled_at: string | null;
  /** Its health as its lane last wrote it (ISO): the one record of it. */
  failing_since: string | null;
  last_delivered_at: string | null;
  /** The feed's head as this was read: what fails for the endpoint's state (disabled) goes no further. */
  head: number;
}

export type EndpointOrdering = "concurrent" | "fifo";

/** The feed's head, as an endpoint enabled again records it (resumed_seq). */
const FEED_HEAD = "(SELECT coalesce(max(seq), 0) FROM order_events)";

export function laneEndpoint(db: D1Queryable, id: string): Promise<LaneEndpoint | null> {
  return db
    .prepare(
      "SELECT id, budget, url, status, secret_sealed, previous_secret_sealed, previous_secret_until, rate_limit, " +
        `disabled_for_leak, ordering, types, from_seq, resumed_seq, enabled_at, failing_since, last_delivered_at, ` +
        `${FEED_HEAD} AS head FROM ` +
        "webhook_endpoints WHERE id = ?1",
    )
    .bind(id)
    .first<LaneEndpoint>();
}

/** What its lane noted of an endpoint's deliveries (endpoint-health.ts). */
export async function recordEndpointHealth(
  db: D1Queryable,
  id: string,
  failingSince: string | null,
  lastDeliveredAt: string | null,
): Promise<void> {
  await db
    .prepare(
      // Never a period from before an enabling the lane had not read when it ran: its next run starts a new one.
      "UPDATE webhook_endpoints SET failing_since = CASE WHEN enabled_at > ?2 THEN NULL ELSE ?2 END, " +
        "last_delivered_at = ?3 WHERE id = ?1",
    )
    .bind(id, failingSince, lastDeliveredAt)
    .run();
}

/** The service disables an endpoint (a 410, or a whole schedule refused), unless it is disabled already. */
export async function disableByService(db: D1Queryable, id: string, reason: string, at: string): Promise<void> {
  await db
    .prepare(
      "UPDATE webhook_endpoints SET status = 'disabled', disabled_at = ?2, disabled_reason = ?3, disabled_by = " +
        "'service' WHERE id = ?1 AND status = 'enabled'",
    )
    .bind(id, at, reason)
    .run();
}

/** An enabled endpoint as a dispatch pass matches events to it. */
export interface DispatchEndpoint {
  id: string;
  /** Comma-separated event types. */
  types: string;
  /** It receives the events after this one (the feed's head when it was made). */
  from_seq: string;
  /**
   * Null while its lane is at the dispatcher's mark; else the last event its lane was handed, and it catches up alone.
   */
  behind_after: string | null;
  /** When a lane behind is tried again (epoch ms); null: at the next pass. */
  behind_retry_at: number | null;
  /** Tries in a row its lane failed. */
  behind_failures: number;
}

export const enabledEndpoints = (db: D1Queryable) =>
  db.prepare(
    "SELECT id, types, CAST(from_seq AS TEXT) AS from_seq, CAST(behind_after AS TEXT) AS behind_after, " +
      "behind_retry_at, behind_failures " +
      "FROM webhook_endpoints WHERE status = 'enabled' ORDER BY id",
  );

/** Enabled endpoints whose lanes are behind the dispatcher's mark (their lanes failed to take events). */
export const countLanesBehind = (db: D1Queryable) =>
  db.prepare("SELECT count(*) AS behind FROM webhook_endpoints WHERE status = 'enabled' AND behind_after IS NOT NULL");

/** Where a lane stands after a pass: behind (and when to try it again), or at the mark (`behindAfter` null). */
export interface LaneStanding {
  id: string;
  behindAfter: string | null;
  retryAt: number | null;
  failures: number;
}

/** Records every lane whose standing a pass changed, in one statement whatever their number. */
export async function recordLaneStandings(db: D1Queryable, standings: readonly LaneStanding[]): Promise<void> {
  if (standings.length === 0) return;
  await db
    .prepare(
      "UPDATE webhook_endpoints SET behind_after = CAST(s.value ->> '$.behindAfter' AS INTEGER), behind_retry_at = " +
        "s.value ->> '$.retryAt', " +
        "behind_failures = s.value ->> '$.failures' FROM json_each(?1) AS s WHERE webhook_endpoints.id = s.value ->> " +
        "'$.id'",
    )
    .bind(JSON.stringify(standings))
    .run();
}

/**
 * Disables an endpoint that a leaked key made or last changed, naming the key (docs/api.md#what-a-leak-ends); an
 * operator's lock stays, any other disabling gives way. False when there is none by that id.
 */
export async function disableForLeak(
  db: D1Queryable,
  id: string,
  keyId: string,
  reason: string,
  at: string,
): Promise<boolean> {
  const { meta } = await db
    .prepare(
      `UPDATE webhook_endpoints SET disabled_at = CASE WHEN status = 'disabled' THEN disabled_at ELSE ?3 END, status ` +
        `= 'disabled', ` +
        `disabled_reason = CASE WHEN ${LOCKED} THEN disabled_reason ELSE ?4 END, disabled_by = CASE WHEN ${LOCKED} ` +
        `THEN 'operator' ELSE 'service' END, ` +
        "disabled_for_leak = ?2 WHERE id = ?1",
    )
    .bind(id, keyId, at, reason)
    .run();
  return meta.changes === 1;
}

/** The most endpoints one account may have. */
export const MAX_ENDPOINTS_PER_ACCOUNT = 10;

export interface WebhookEndpointRow {
  id: string;
  budget: string;
  url: string;
  types: string;
  status: "enabled" | "disabled";
  created_at: string;
  secret_sealed: string;
  disabled_at: string | null;
  disabled_reason: string | null;
  disabled_by: "operator" | "owner" | "service" | null;
  /** What the operator who disabled it tells its owner; null for none. */
  disabled_note: string | null;
  previous_secret_sealed: string | null;
  previous_secret_until: string | null;
  rate_limit: number | null;
  /** When its URL last changed; null: not since it was made. */
  url_changed_at: string | null;
  /**
   * Since when its deliveries fail (null while they succeed) and when one last succeeded, as its lane last wrote them.
   */
  failing_since: string | null;
  last_delivered_at: string | null;
  /** The leaked key whose revocation disabled it (enabled again only with its URL confirmed); null otherwise. */
  disabled_for_leak: string | null;
  /** An Ed25519 endpoint's public key (`whpk_...`); null: it signs with an HMAC secret. */
  public_key: string | null;
  ordering: EndpointOrdering;
}

const COLUMNS =
  "id, budget, url, types, status, created_at, secret_sealed, disabled_at, disabled_reason, disabled_by, " +
  "disabled_note, previous_secret_sealed, previous_secret_until, " +
  "rate_limit, url_changed_at, failing_since, last_delivered_at, disabled_for_leak, public_key, ordering";

export async function accountEndpoints(db: D1Queryable, account: string): Promise<WebhookEndpointRow[]> {
  const { results } = await db
    .prepare(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE budget = ?1 ORDER BY created_at, id`)
    .bind(account)
    .all<WebhookEndpointRow>();
  return results;
}

export function accountEndpoint(db: D1Queryable, account: string, id: string): Promise<WebhookEndpointRow | null> {
  return db
    .prepare(`SELECT ${COLUMNS} FROM webhook_endpoints WHERE budget = ?1 AND id = ?2`)
    .bind(account, id)
    .first<WebhookEndpointRow>();
}

/** Every endpoint of every account, for operators. */
export async function allEndpoints(db: D1Queryable): Promise<WebhookEndpointRow[]> {
  const { results } = await db
    .prepare(`SELECT ${COLUMNS} FROM webhook_endpoints ORDER BY created_at, id`)
    .all<WebhookEndpointRow>();
  return results;
}

/** An account's endpoints an operator disabled: their URLs no owner may point an endpoint at. */
export async function lockedEndpoints(db: D1Queryable, account: string): Promise<{ id: string; url: string }[]> {
  const { results } = await db
    .prepare(`SELECT id, url FROM webhook_endpoints WHERE budget = ?1 AND ${LOCKED}`)
    .bind(account)
    .all<{ id: string; url: string }>();
  return results;
}

/**
 * Adds an endpoint, receiving the events after the feed's head, in one statement, so two concurrent creations cannot
 * both pass the count. Not past MAX_ENDPOINTS_PER_ACCOUNT, nor beside a URL an operator disabled (`locked`), nor on a
 * locked host (`host_locked`). Safe to retry.
 */
export async function insertEndpoint(
  db: D1Queryable,
  row: Pick<
    WebhookEndpointRow,
    "id" | "budget" | "url" | "types" | "created_at" | "secret_sealed" | "rate_limit" | "public_key" | "ordering"
  >,
  host: string,
  /** The key that makes it: its URL, secret and types are that key's (docs/api.md#what-a-leak-ends). */
  setBy: string,
): Promise<"inserted" | "full" | "locked" | "host_locked"> {
  const { meta } = await db
    .prepare(
      "INSERT INTO webhook_endpoints (id, budget, url, types, status, created_at, from_seq, secret_sealed, " +
        "rate_limit, public_key, ordering, url_set_by, secret_set_by, types_set_by) " +
        "SELECT ?1, ?2, ?3, ?4, 'enabled', ?5, (SELECT coalesce(max(seq), 0) FROM order_events), ?6, ?7, ?9, ?10, " +
        "?11, ?11, ?11 " +
        `WHERE (SELECT count(*) FROM webhook_endpoints WHERE budget = ?2) < ${MAX_ENDPOINTS_PER_ACCOUNT} ` +
        // The same URL again beside one an operator disabled would lift the lock by the back door.
        `AND NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE budget = ?2 AND url = ?3 AND ${LOCKED}) ` +
        // A retry of an insert that did happen (its answer lost) adds nothing.
        "AND NOT EXISTS (SELECT 1 FROM webhook_endpoints WHERE id = ?1) " +
        `AND NOT ${HOST_LOCKED(8)}`,
    )
    .bind(
      row.id,
      row.budget,
      row.url,
      row.types,
      row.created_at,
      row.secret_sealed,
      row.rate_limit,
      host,
      row.public_key ?? null,
      row.ordering ?? "concurrent",
      setBy,
    )
    .run();
  if (meta.changes === 1 || (await accountEndpoint(db, row.budget, row.id)) !== null) return "inserted";
  if (await hostLock(db, host)) return "host_locked";
  const locked = await db
    .prepare(`SELECT 1 AS locked FROM webhook_endpoints WHERE budget = ?1 AND url = ?2 AND ${LOCKED}`)
    .bind(row.budget, row.url)
    .first();
  return locked ? "locked" : "full";
}

/** What an owner changes of its endpoint; a field left out stays as it is. */
export interface EndpointChanges {
  url?: string;
  /** Comma-separated, as stored. */
  types?: string;
  status?: "enabled" | "disabled";
  /** null: no limit. */
  rateLimit?: number | null;
  /** How it receives from the next delivery on. */
  ordering?: EndpointOrdering;
  /** The URL the owner confirmed, normal form: enabling one disabled for a leaked key needs it. */
  confirmedUrl?: string;
  /** The key asking: never the leaked key itself, whatever it confirms. */
  keyId?: string;
  /** The new URL's host, normal form: never one an operator locked. */
  host?: string;
}

/**
 * Changes an account's endpoint in one statement: enabling clears why it was disabled, disabling records the owner.
 * Null when there is no such endpoint. Refused (`locked`, nothing changes) for an operator's lock, a leak's without its
 * URL confirmed, or a URL an operator disabled.
 */
export async function updateEndpoint(
  db: D1Queryable,
  account: string,
  id: string,
  changes: EndpointChanges,
  at: string,
): Promise<{ row: WebhookEndpointRow; locked: boolean } | null> {
  const enable = changes.status === "enabled" ? 1 : 0;
  const disable = changes.status === "disabled" ? 1 : 0;
  const row = await db
    .prepare(
      "UPDATE webhook_endpoints SET url = coalesce(?3, url), url_changed_at = CASE WHEN ?3 IS NOT NULL AND ?3 IS NOT " +
        "url THEN ?7 ELSE url_changed_at END, types = coalesce(?4, types), " +
        // Who set the parts a leaked key could aim, kept on the row (docs/api.md#what-a-leak-ends).
        "url_set_by = CASE WHEN ?3 IS NOT NULL THEN ?11 ELSE url_set_by END, " +
        "types_set_by = CASE WHEN ?4 IS NOT NULL THEN ?11 ELSE types_set_by END, " +
        "status = CASE WHEN ?5 THEN 'enabled' WHEN ?6 THEN 'disabled' ELSE status END, " +
        "disabled_at = CASE WHEN ?5 THEN NULL WHEN ?6 THEN coalesce(disabled_at, ?7) ELSE disabled_at END, " +
        "disabled_reason = CASE WHEN ?5 THEN NULL WHEN ?6 THEN coalesce(disabled_reason, 'disabled by its owner') " +
        "ELSE disabled_reason END, " +
        "disabled_by = CASE WHEN ?5 THEN NULL WHEN ?6 THEN coalesce(disabled_by, 'owner') ELSE disabled_by END, " +
        "disabled_for_leak = CASE WHEN ?5 THEN NULL ELSE disabled_for_leak END, " +
        // Enabled again, a failing endpoint starts a new period (docs/api.md#failing-endpoints), and its lane fails
        // what it had not sent by now.
        "failing_since = CASE WHEN ?5 AND status = 'disabled' THEN NULL ELSE failing_since END, " +
        `resumed_seq = CASE WHEN ?5 AND status = 'disabled' THEN ${FEED_HEAD} ELSE resumed_seq END, ` +
        "enabled_at = CASE WHEN ?5 AND status = 'disabled' THEN ?7 ELSE enabled_at END, " +
        "rate_limit = CASE WHEN ?8 THEN ?9 ELSE rate_limit END, ordering = coalesce(?13, ordering) " +
        `WHERE budget = ?1 AND id = ?2 AND NOT (?5 AND ${LOCKED}) AND NOT (?3 IS NOT NULL AND ?3 IS NOT url AND ` +
        `${LOCKED}) ` +
        "AND NOT (?5 AND disabled_for_leak IS NOT NULL AND (?10 IS NOT coalesce(?3, url) OR disabled_for_leak IS " +
        "?11)) " +
        `AND NOT (?3 IS NOT NULL AND ?3 IS NOT url AND ${HOST_LOCKED(12)}) ` +
        // Unqualified, the lock's columns are the other endpoint's (SQLite reads a name in the innermost FROM first).
        `AND NOT (?3 IS NOT NULL AND EXISTS (SELECT 1 FROM webhook_endpoints AS other WHERE other.budget = ?1 AND ` +
        `other.id <> ?2 AND other.url = ?3 AND ${LOCKED})) ` +
        `RETURNING ${COLUMNS}`,
    )
    .bind(
      account,
      id,
      changes.url ?? null,
      changes.types ?? null,
      enable,
      disable,
      at,
      changes.rateLimit === undefined ? 0 : 1,
      changes.rateLimit ?? null,
      changes.confirmedUrl ?? null,
      changes.keyId ?? null,
      changes.host ?? null,
      changes.ordering ?? null,
    )
    .first<WebhookEndpointRow>();
  if (row) return { row, locked: false };
  const unchanged = await accountEndpoint(db, account, id);
  return unchanged && { row: unchanged, locked: true };
}

/**
 * Replaces an endpoint's secret. During an overlap the receiver's secret from before it began keeps signing until
 * `previousUntil`, so a retried rotation never cuts off a receiver; with none (a leak) no old secret signs. False when
 * there is no such endpoint.
 */
export async function rotateEndpointSecret(
  db: D1Queryable,
  account: string,
  id: string,
  sealed: string,
  publicKey: string | null,
  when: { previousUntil: string | null; now: string },
  setBy: string,
): Promise<boolean> {
  // How an endpoint signs never changes: an hmac endpoint takes a secret, an ed25519 one a key pair.
  const { meta } = await db
    .prepare(
      "UPDATE webhook_endpoints SET previous_secret_sealed = CASE WHEN ?4 IS NULL THEN NULL WHEN " +
        "previous_secret_until > ?5 THEN previous_secret_sealed ELSE secret_sealed END, " +
        "previous_secret_until = ?4, secret_sealed = ?3, public_key = ?6, secret_set_by = ?7 " +
        "WHERE budget = ?1 AND id = ?2 AND (public_key IS NULL) = (?6 IS NULL)",
    )
    .bind(account, id, sealed, when.previousUntil, when.now, publicKey, setBy)
    .run();
  return meta.changes === 1;
}

/** Deletes an account's endpoint; false when none. Its lane is emptied by the caller or at its next run. */
export async function deleteEndpoint(
  db: D1Queryable,
  account: string,
  id: string,
): Promise<"deleted" | "locked" | "none"> {
  // An endpoint an operator disabled stays (its owner would otherwise lift the lock by making it again).
  const { meta } = await db
    .prepare(`DELETE FROM webhook_endpoints WHERE budget = ?1 AND id = ?2 AND NOT (${LOCKED})`)
    .bind(account, id)
    .run();
  if (meta.changes === 1) return "deleted";
  return (await accountEndpoint(db, account, id)) ? "locked" : "none";
}

/** An operator enables an endpoint, whoever disabled it; false when there is none by that id. */
export async function enableEndpoint(db: D1Queryable, id: string, at: string): Promise<boolean> {
  const { meta } = await db
    .prepare(
      "UPDATE webhook_endpoints SET status = 'enabled', disabled_at = NULL, disabled_reason = NULL, disabled_by = " +
        "NULL, disabled_note = NULL, disabled_for_leak = NULL, " +
        // A failing endpoint starts a new period (docs/api.md#failing-endpoints).
        "failing_since = CASE WHEN status = 'disabled' THEN NULL ELSE failing_since END, " +
        // And what its lane had not sent by now is failed: sent only if recovered.
        `resumed_seq = CASE WHEN status = 'disabled' THEN ${FEED_HEAD} ELSE resumed_seq END, ` +
        "enabled_at = CASE WHEN status = 'disabled' THEN ?2 ELSE enabled_at END WHERE id = ?1",
    )
    .bind(id, at)
    .run();
  return meta.changes === 1;
}

/**
 * An operator disables an endpoint, with what its owner is told (`note`); its owner cannot enable it again, and an
 * earlier disabling gives way. False when there is none by that id.
 */
export async function disableEndpoint(
  db: D1Queryable,
  id: string,
  reason: string,
  at: string,
  note: string | null = null,
): Promise<boolean> {
  const { meta } = await db
    .prepare(
      "UPDATE webhook_endpoints SET status = 'disabled', disabled_at = CASE WHEN disabled_by IS 'operator' THEN " +
        "disabled_at ELSE ?2 END, " +
        "disabled_reason = CASE WHEN disabled_by IS 'operator' THEN disabled_reason ELSE ?3 END, disabled_by = " +
        "'operator', disabled_note = ?4 WHERE id = ?1",
    )
    .bind(id, at, reason, note)
    .run();
  return meta.changes === 1;
}

/** The service disables an endpoint whose every attempt failed for its period: only if enabled and still in it. */
export const disableForFailing = (db: D1Queryable, id: string, at: string, reason: string, periodFrom: string) =>
  db
    .prepare(
      "UPDATE webhook_endpoints SET status = 'disabled', disabled_at = ?2, disabled_reason = ?3, disabled_by = " +
        "'service' WHERE id = ?1 AND status = 'enabled' AND failing_since = ?4",
    )
    .bind(id, at, reason, periodFrom);
