/**
 * Notices of a failing endpoint (docs/api.md#failing-endpoints): `webhook_endpoint.failing` and `.disabled`, told to
 * the account's other endpoints that name the type, never to the failing one. Not order events: they have ids of their
 * own (ntc_), and in a lane a notice is keyed by its negated id, so it never meets an event and a fifo lane sends it
 * ahead of them.
 */
import type { D1Queryable } from "../lib/d1-session";
import { disableForFailing } from "./endpoint-table";

export const ENDPOINT_NOTICE_TYPES = ["webhook_endpoint.failing", "webhook_endpoint.disabled"] as const;
export type EndpointNoticeType = (typeof ENDPOINT_NOTICE_TYPES)[number];

/** How long a notice is kept: every delivery of it is settled long before (the retry schedule spans about 3 days). */
export const NOTICE_RETENTION_MS = 30 * 86_400_000;
/** Notices pruned at most per cron run. */
const NOTICE_PRUNE_BATCH = 1_000;
/** A notice row's bytes in D1, indexes included: two at most an endpoint and failing period. */
export const NOTICE_ROW_BYTES = 600;

/** A notice's id, as its deliveries' webhook-id and its JSON carry it. */
export const noticeIdOf = (id: number) => `ntc_${id}`;

/** The endpoint as the notice carries it, as it was when the notice was made; `failingSince` is the period's. */
const ENDPOINT_AS_NOTICED =
  "json_object('id', id, 'url', url, 'status', status, 'failingSince', ?3, 'lastDeliveredAt', last_delivered_at, " +
  "'disabledReason', CASE WHEN status = 'disabled' THEN 'disabled by the service: ' || disabled_reason END)";

const insertNotice = (db: D1Queryable, endpointId: string, type: EndpointNoticeType, periodFrom: string, at: string) =>
  db
    .prepare(
      "INSERT OR IGNORE INTO endpoint_notices (budget, endpoint_id, type, period_from, created_at, endpoint) SELECT " +
        `budget, id, ?2, ?3, ?4, ${ENDPOINT_AS_NOTICED} FROM webhook_endpoints WHERE id = ?1 AND ` +
        (type === "webhook_endpoint.failing"
          ? // Still in that period: not enabled again, nor delivering, since the lane read it.
            "status = 'enabled' AND failing_since = ?3"
          : // Only the disabling this very statement's batch made: not an owner's, an operator's or an older one.
            "status = 'disabled' AND disabled_by = 'service' AND disabled_at = ?4"),
    )
    .bind(endpointId, type, periodFrom, at);

/** The notice of that type made for that period, if any. */
const noticeOf = (db: D1Queryable, endpointId: string, type: EndpointNoticeType, periodFrom: string) =>
  db
    .prepare("SELECT id FROM endpoint_notices WHERE endpoint_id = ?1 AND type = ?2 AND period_from = ?3")
    .bind(endpointId, type, periodFrom);

/**
 * Makes a period's notice once; with `disable`, disables the endpoint in the same transaction and makes the notice only
 * if it did. Only while the row is still in that period. The notice's id, or null.
 */
export async function makeNotice(
  db: D1Queryable,
  notice: { endpointId: string; type: EndpointNoticeType; periodFrom: string; at: string; disable?: string },
): Promise<number | null> {
  const { endpointId, type, periodFrom, at } = notice;
  const statements = [insertNotice(db, endpointId, type, periodFrom, at), noticeOf(db, endpointId, type, periodFrom)];
  if (notice.disable !== undefined)
    statements.unshift(disableForFailing(db, endpointId, at, notice.disable, periodFrom));
  const results = await db.batch<{ id: number }>(statements);
  return results.at(-1)!.results[0]?.id ?? null;
}

/** The notice already made of that type for that period: the id a lane hands on after a crash, or null. */
export async function madeNotice(
  db: D1Queryable,
  endpointId: string,
  type: EndpointNoticeType,
  periodFrom: string,
): Promise<number | null> {
  return (await noticeOf(db, endpointId, type, periodFrom).first<{ id: number }>())?.id ?? null;
}

/** An endpoint `e` told of `endpoint`'s notice of `type`: another of its account's (`budget`), enabled, naming it. */
const toldOf = (budget: string, endpoint: string, type: string) =>
  `e.budget = ${budget} AND e.id <> ${endpoint} AND e.status = 'enabled' AND ',' || e.types || ',' LIKE '%,' || ` +
  `${type} || ',%'`;

/** Who is told a notice: the account's other enabled endpoints whose types name it. */
export async function noticeRecipients(db: D1Queryable, noticeId: number): Promise<string[]> {
  const { results } = await db
    .prepare(
      "SELECT e.id FROM endpoint_notices AS n JOIN webhook_endpoints AS e ON " +
        `${toldOf("n.budget", "n.endpoint_id", "n.type")} WHERE n.id = ?1 ORDER BY e.id`,
    )
    .bind(noticeId)
    .all<{ id: string }>();
  return results.map(({ id }) => id);
}

/** Whether any endpoint would be told of this endpoint's notice of that type now: with none, nothing is owed. */
export async function anyNoticeRecipient(
  db: D1Queryable,
  endpointId: string,
  type: EndpointNoticeType,
): Promise<boolean> {
  const found = await db
    .prepare(
      "SELECT 1 AS found FROM webhook_endpoints AS f JOIN webhook_endpoints AS e ON " +
        `${toldOf("f.budget", "f.id", "?2")} WHERE f.id = ?1 LIMIT 1`,
    )
    .bind(endpointId, type)
    .first<{ found: number }>();
  return found !== null;
}

/** Each notice's JSON, by id, for those still kept. */
export async function noticeBodies(db: D1Queryable, ids: readonly number[]): Promise<Map<number, string>> {
  if (ids.length === 0) return new Map();
  const { results } = await db
    .prepare(
      "SELECT id, type, created_at, endpoint FROM endpoint_notices WHERE id IN (SELECT value FROM json_each(?1))",
    )
    .bind(JSON.stringify(ids))
    .all<{ id: number; type: string; created_at: string; endpoint: string }>();
  return new Map(
    results.map((row) => [
      row.id,
      `{"id":"${noticeIdOf(row.id)}","type":${JSON.stringify(row.type)},` +
        `"createdAt":${JSON.stringify(row.created_at)},"endpoint":${row.endpoint}}`,
    ]),
  );
}

/** Deletes notices older than NOTICE_RETENTION_MS but an open period's (its told mark), a batch a run; how many. */
export async function pruneNotices(db: D1Queryable, now: number): Promise<number> {
  const { meta } = await db
    .prepare(
      "DELETE FROM endpoint_notices WHERE id IN (SELECT n.id FROM endpoint_notices AS n WHERE n.created_at < ?1 AND " +
        "NOT (n.type = 'webhook_endpoint.failing' AND EXISTS (SELECT 1 FROM webhook_endpoints AS e WHERE e.id = " +
        "n.endpoint_id AND e.failing_since = n.period_from)) ORDER BY n.created_at LIMIT ?2)",
    )
    .bind(new Date(now - NOTICE_RETENTION_MS).toISOString(), NOTICE_PRUNE_BATCH)
    .run();
  return meta.changes;
}
