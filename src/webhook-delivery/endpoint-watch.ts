/**
 * What a lane does after each run for its endpoint's owner
 * (docs/api.md#failing-endpoints): notes its health (endpoint-health.ts),
 * and once every attempt has failed long enough, tells the owner by another
 * path than the failing endpoint (endpoint-notices.ts), then disables it.
 * A notice is made once a period in D1, then handed to each recipient's
 * lane; the lane remembers a notice it owes, and who has it, until every
 * recipient has it, so a crash or a failing lane between the two loses none
 * and sends none twice (a lane keeps one delivery per notice).
 */
import { logLine } from "../lib/log";
import type { D1Queryable } from "../lib/d1-session";
import { failingVerdict, nextHealth, secondHalfFrom, type HealthNote, type HealthPeriods } from "./endpoint-health";
import { recordEndpointHealth } from "./endpoint-table";
import { madeNotice, makeNotice, noticeRecipients, type EndpointNoticeType } from "./endpoint-notices";
import { failedAttemptsSince, lastSuccessSince } from "./lane-attempts";

export interface WatchContext {
  db: D1Queryable;
  sql: SqlStorage;
  /** The lane's own key-value storage: its health note, and the notice it owes. */
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

/** A period as an owner reads it: "5 days", "3 h", "60 s". */
export function periodText(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? "" : "s"}`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} h`;
  return `${seconds} s`;
}

/**
 * After a run that POSTed `sent` deliveries, `delivered` of them accepted:
 * the run noted first, then every notice the lane owes handed on. A
 * dependency that fails while the run is noted (D1) throws, and the lane's
 * run is tried again; a recipient's lane that cannot be reached is tried
 * again OWED_NOTICE_RETRY_MS later, the others handed theirs meanwhile.
 * Whether a notice is still owed (the lane must run again).
 */
export async function watchEndpoint(
  context: WatchContext,
  run: { delivered: number; sent: number },
): Promise<{ owesNotice: boolean }> {
  if (run.sent > 0) await noteRun(context, run);
  return { owesNotice: await handOwedNotices(context) };
}

/** The run in the endpoint's health, and what its failing period calls for. */
async function noteRun(context: WatchContext, run: { delivered: number; sent: number }): Promise<void> {
  const { kv } = context;
  const now = context.now();
  const { note, write } = nextHealth(await periodStillOpen(context, kv.get<HealthNote>("health")), run, now);
  if (write) {
    try {
      await recordEndpointHealth(
        context.db,
        context.endpointId,
        note.failingSince === null ? null : iso(note.failingSince),
        note.lastDeliveredAt === null ? null : iso(note.lastDeliveredAt),
      );
    } catch (error) {
      // A success is kept, to be written at the next run; a failing period starts only once the row has it.
      if (note.failingSince === null) kv.put("health", { ...note, writtenAt: 0 });
      return logLine("warn", "webhook-lane", "an endpoint's health was not written; the next run tries again", {
        endpointId: context.endpointId,
        error: String(error),
      });
    }
  }
  kv.put("health", note);
  if (note.failingSince === null) return;
  const recentFailures = failedAttemptsSince(context.sql, secondHalfFrom(note.failingSince, now));
  const verdict = failingVerdict(note, recentFailures, context.health, now);
  if (verdict === "none") return;
  const owed: OwedNotice = {
    type: verdict === "disable" ? "webhook_endpoint.disabled" : "webhook_endpoint.failing",
    periodFrom: iso(note.failingSince),
    handed: [],
  };
  // Owed before it is made: made and the lane gone before it was noted, it would never be handed.
  kv.put("owedNotices", [...owedNotices(context), owed]);
  await makeNotice(context.db, {
    endpointId: context.endpointId,
    type: owed.type,
    periodFrom: owed.periodFrom,
    at: iso(now),
    disable:
      verdict === "disable" ? `every attempt failed for ${periodText(context.health.disableAfterMs)}` : undefined,
  });
  if (verdict === "tell failing") kv.put("health", { ...note, toldFailing: note.failingSince });
  if (verdict === "disable")
    logLine("warn", "webhook-lane", "an endpoint that failed every attempt was disabled", {
      endpointId: context.endpointId,
      failingSince: owed.periodFrom,
    });
}

const owedNotices = (context: WatchContext) => context.kv.get<OwedNotice[]>("owedNotices") ?? [];

/**
 * The note as it stands, unless its failing period has ended meanwhile
 * without the note saying so: the endpoint was enabled again (enabling
 * clears the row's failing_since; a note is kept with a failingSince only
 * once the row has it), or an attempt got through (the lane's attempts say
 * so, whatever became of the run that made it). A new period starts with the
 * next failure.
 */
async function periodStillOpen(context: WatchContext, note: HealthNote | undefined): Promise<HealthNote | undefined> {
  if (note === undefined || note.failingSince === null) return note;
  const delivered = lastSuccessSince(context.sql, note.failingSince);
  if (delivered !== null) return { failingSince: null, lastDeliveredAt: delivered, writtenAt: 0, toldFailing: null };
  const row = await context.db
    .prepare("SELECT failing_since FROM webhook_endpoints WHERE id = ?1")
    .bind(context.endpointId)
    .first<{ failing_since: string | null }>();
  return row !== null && row.failing_since === null
    ? { failingSince: null, lastDeliveredAt: note.lastDeliveredAt, writtenAt: 0, toldFailing: null }
    : note;
}

/**
 * Hands each owed notice to the recipients that do not have it yet; whether
 * any is still owed. One that was never made (its transaction failed, or the
 * endpoint changed meanwhile) is owed no more: the rule says again whether it
 * is due. A deleted endpoint's lane is emptied with what it owed.
 */
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
