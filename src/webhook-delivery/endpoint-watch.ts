/**
 * What a lane does after each run for its owner (docs/api.md#failing-endpoints): notes its health in its row, and once
 * every attempt has failed long enough, tells the owner by another path, then disables it. A notice is made once a
 * period in D1 and owed by the lane until each recipient's lane has it: a crash loses none and sends none twice.
 */
import { logLine } from "../lib/log";
import type { D1Queryable } from "../lib/d1-session";
import {
  DISABLE_MIN_RECENT_FAILURES,
  failingVerdict,
  nextHealth,
  periodStart,
  secondHalfFrom,
  type HealthNote,
  type HealthPeriods,
} from "./endpoint-health";
import { recordEndpointHealth, type LaneEndpoint } from "./endpoint-table";
import {
  anyNoticeRecipient,
  madeNotice,
  makeNotice,
  noticeRecipients,
  type EndpointNoticeType,
} from "./endpoint-notices";
import { tookIt } from "./lane-attempts";
import { pendingAttemptsSince, pendingSeqs } from "./lane-deliveries";
import { failedAttemptsSince, lastSuccessSince, spentSince } from "./lane-settled";
import { lastLoggedAt } from "./lane-log";

export interface WatchContext {
  db: D1Queryable;
  sql: SqlStorage;
  /** The lane's own key-value storage: the notices it owes, and a success its endpoint's row has not taken. */
  kv: SyncKvStorage;
  endpointId: string;
  now(): number;
  health: HealthPeriods;
  /** Hands a recipient's lane its deliveries (the notice's negated id); throws when that lane cannot be reached. */
  handToLane(endpointId: string, seqs: string[]): Promise<number>;
}

/** A notice made (or being made) and not yet handed to every recipient: those it was handed to. */
interface OwedNotice {
  type: EndpointNoticeType;
  periodFrom: string;
  handed: string[];
}

/** How soon a lane tries again to hand a notice to a recipient whose lane could not be reached. */
export const OWED_NOTICE_RETRY_MS = 30_000;

const iso = (ms: number) => new Date(ms).toISOString();

/** An ISO time of D1's as Unix ms; null when absent or not a time. */
const instant = (value: string | null | undefined): number | null => {
  const ms = Date.parse(value ?? "");
  return Number.isNaN(ms) ? null : ms;
};

/** A period as an owner reads it: "5 days", "3 h", "60 s". */
export function periodText(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? "" : "s"}`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} h`;
  return `${seconds} s`;
}

/**
 * After a run: the run noted (a D1 failure throws, and the run is tried again), then every owed notice handed on; an
 * unreachable recipient is tried OWED_NOTICE_RETRY_MS later. Whether a notice is still owed.
 */
export async function watchEndpoint(context: WatchContext, run: WatchedRun): Promise<{ owesNotice: boolean }> {
  if (run.sent > 0) await noteRun(context, run);
  return { owesNotice: await handOwedNotices(context) };
}

/** A run as the watch notes it, with its endpoint's row as it read it (absent: it sent nothing). */
export interface WatchedRun {
  delivered: number;
  sent: number;
  began: number;
  endpoint?: Pick<LaneEndpoint, "enabled_at" | "failing_since" | "last_delivered_at">;
}

/** The lane's key for when a success its row has not taken was made (its write failed): kept until the row has it. */
const UNWRITTEN_SUCCESS = "unwrittenSuccess";

/** The run in the endpoint's health, and what its failing period calls for. */
async function noteRun(context: WatchContext, run: WatchedRun): Promise<void> {
  const { db, endpointId, kv } = context;
  const now = context.now();
  const noted = {
    failingSince: instant(run.endpoint?.failing_since),
    lastDeliveredAt: instant(run.endpoint?.last_delivered_at),
  };
  const unwritten = kv.get<number>(UNWRITTEN_SUCCESS);
  const open = periodStillOpen(
    context.sql,
    unwritten === undefined ? noted : { failingSince: null, lastDeliveredAt: unwritten },
  );
  const countFrom = instant(run.endpoint?.enabled_at) ?? 0;
  // Read only when the run may open a period: every attempt failed, and none is open yet.
  const failingFrom =
    run.delivered === 0 && open.failingSince === null ? failureBefore(context.sql, run.began, open, countFrom) : null;
  const next = nextHealth(open, { ...run, failingFrom }, now);
  const { note } = next;
  if (next.write || note.failingSince !== noted.failingSince) {
    try {
      await recordEndpointHealth(
        db,
        endpointId,
        note.failingSince === null ? null : iso(note.failingSince),
        note.lastDeliveredAt === null ? null : iso(note.lastDeliveredAt),
      );
    } catch (error) {
      // The next run notes it again; a success is kept meanwhile, as the log of its attempts may be pruned first.
      if (note.failingSince === null && note.lastDeliveredAt !== unwritten)
        kv.put(UNWRITTEN_SUCCESS, note.lastDeliveredAt);
      return logLine("warn", "webhook-lane", "an endpoint's health was not written; the next run tries again", {
        endpointId,
        error: String(error),
      });
    }
    if (unwritten !== undefined) kv.delete(UNWRITTEN_SUCCESS);
  }
  if (note.failingSince === null) return;
  const failures = recentFailures(context.sql, secondHalfFrom(note.failingSince, now));
  const periodFrom = iso(note.failingSince);
  let verdict = failingVerdict(note, failures, context.health, now);
  // Told once a period: its failing notice, kept while the period lasts, is the mark.
  if (verdict === "tell failing" && (await madeNotice(db, endpointId, "webhook_endpoint.failing", periodFrom)) !== null)
    verdict = failingVerdict({ ...note, toldFailing: note.failingSince }, failures, context.health, now);
  if (verdict === "none") return;
  const owed: OwedNotice = {
    type: verdict === "disable" ? "webhook_endpoint.disabled" : "webhook_endpoint.failing",
    periodFrom,
    handed: [],
  };
  // Owed before it is made: made and the lane gone before it was noted, it would never be handed. Once: a making that
  // failed left it owed already. With nobody to tell, it is only made, as the mark (and the disabling's record).
  const already = owedNotices(context);
  const owedAlready = already.some((each) => each.type === owed.type && each.periodFrom === periodFrom);
  if (!owedAlready && (await anyNoticeRecipient(db, endpointId, owed.type))) kv.put("owedNotices", [...already, owed]);
  await makeNotice(db, {
    endpointId,
    type: owed.type,
    periodFrom,
    at: iso(now),
    disable:
      verdict === "disable" ? `every attempt failed for ${periodText(context.health.disableAfterMs)}` : undefined,
  });
  if (verdict === "disable")
    logLine("warn", "webhook-lane", "an endpoint that failed every attempt was disabled", {
      endpointId,
      failingSince: periodFrom,
    });
}

/** Attempts since `since` that failed, pending or settled, each once, counted up to DISABLE_MIN_RECENT_FAILURES. */
export function recentFailures(sql: SqlStorage, since: number): number {
  const pending = pendingAttemptsSince(sql, since).filter((attempt) => !tookIt(attempt)).length;
  const enough = Math.max(0, DISABLE_MIN_RECENT_FAILURES - pending);
  return pending + failedAttemptsSince(sql, since, enough, pendingSeqs(sql));
}

/** periodStart over the pending rows' attempts and those of schedules this run spent, from `countFrom`. */
function failureBefore(sql: SqlStorage, began: number, note: HealthNote, countFrom: number): number | null {
  const failures = [...pendingAttemptsSince(sql, countFrom), ...spentSince(sql, began)]
    .filter((attempt) => !tookIt(attempt) && attempt[0] >= countFrom && attempt[0] < began)
    .map((attempt) => attempt[0]);
  if (failures.length === 0) return null;
  const first = failures.reduce((min, at) => Math.min(min, at));
  const found = [lastLoggedAt(sql), lastSuccessOf(sql, first)].filter((at) => at !== null);
  const lastSuccess = found.length > 0 ? Math.max(...found) : note.lastDeliveredAt;
  return periodStart(failures, Math.max(countFrom, lastSuccess === null ? 0 : lastSuccess + 1), began);
}

function lastSuccessOf(sql: SqlStorage, since: number): number | null {
  const pending = pendingAttemptsSince(sql, since)
    .filter(tookIt)
    .map((attempt) => attempt[0]);
  const settled = lastSuccessSince(sql, since, pendingSeqs(sql));
  const all = settled === null ? pending : [...pending, settled];
  return all.length === 0 ? null : Math.max(...all);
}

const owedNotices = (context: WatchContext) => context.kv.get<OwedNotice[]>("owedNotices") ?? [];

/** The row's note, unless an attempt got through since its period began (a write the row may not have). */
function periodStillOpen(sql: SqlStorage, note: HealthNote): HealthNote {
  if (note.failingSince === null) return note;
  const logged = lastLoggedAt(sql);
  const delivered = logged !== null && logged >= note.failingSince ? logged : lastSuccessOf(sql, note.failingSince);
  return delivered === null ? note : { failingSince: null, lastDeliveredAt: delivered, toldFailing: null };
}

/** Hands each owed notice to the recipients still without it (one never made is owed no more); whether any is left. */
async function handOwedNotices(context: WatchContext): Promise<boolean> {
  const owed = owedNotices(context);
  if (owed.length === 0) return false;
  const left: OwedNotice[] = [];
  for (const notice of owed) {
    const id = await madeNotice(context.db, context.endpointId, notice.type, notice.periodFrom);
    if (id === null) continue;
    const recipients = (await noticeRecipients(context.db, id)).filter((each) => !notice.handed.includes(each));
    const results = await Promise.allSettled(recipients.map((each) => context.handToLane(each, [String(-id)])));
    results.forEach((result, index) => {
      if (result.status === "fulfilled") notice.handed.push(recipients[index]!);
      else
        logLine("warn", "webhook-lane", "a notice was not handed to a recipient's lane; it is tried again", {
          endpointId: context.endpointId,
          recipient: recipients[index],
          notice: id,
          error: String(result.reason),
        });
    });
    if (results.some((result) => result.status === "rejected")) left.push(notice);
  }
  if (left.length === 0) context.kv.delete("owedNotices");
  else context.kv.put("owedNotices", left);
  return left.length > 0;
}
