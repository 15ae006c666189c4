/**
 * What a lane does after each run for its endpoint's owner
 * (docs/api.md#failing-endpoints): notes its health (endpoint-health.ts),
 * and once every attempt has failed long enough, tells the owner by another
 * path than the failing endpoint (endpoint-notices.ts), then disables it.
 * A notice is made once a period in D1, then handed to each recipient's
 * lane; the lane remembers a notice it owes until every recipient has it, so
 * a crash or a failing lane between the two loses none and sends none twice
 * (a lane keeps one delivery per notice).
 */
import { logLine } from "../lib/log";
import type { D1Queryable } from "../lib/d1-session";
import { failingVerdict, nextHealth, secondHalfFrom, type HealthNote, type HealthPeriods } from "./endpoint-health";
import { recordEndpointHealth } from "./endpoint-table";
import { madeNotice, makeNotice, noticeRecipients, type EndpointNoticeType } from "./endpoint-notices";
import { failedAttemptsSince } from "./lane-attempts";

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

/** A notice made and not yet handed to every recipient. */
interface OwedNotice {
  type: EndpointNoticeType;
  periodFrom: string;
}

const iso = (ms: number) => new Date(ms).toISOString();

/** A period as an owner reads it: "5 days", "3 h", "60 s". */
export function periodText(ms: number): string {
  const seconds = Math.round(ms / 1000);
  if (seconds % 86_400 === 0) return `${seconds / 86_400} day${seconds === 86_400 ? "" : "s"}`;
  if (seconds % 3_600 === 0) return `${seconds / 3_600} h`;
  return `${seconds} s`;
}

/**
 * After a run that POSTed `sent` deliveries, `delivered` of them accepted. A
 * health write that fails is tried again at the next run; a notice that
 * cannot be handed on throws, the lane's run is tried again, and the notice
 * is handed first.
 */
export async function watchEndpoint(context: WatchContext, run: { delivered: number; sent: number }): Promise<void> {
  const { kv } = context;
  await handOwedNotice(context);
  if (run.sent === 0) return;
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
  };
  kv.put("owedNotice", owed);
  const id = await makeNotice(context.db, {
    endpointId: context.endpointId,
    ...owed,
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
  await handNotice(context, id);
}

/**
 * The note as it stands, unless the endpoint was enabled again since its
 * failing period began: enabling clears the row's failing_since, and a new
 * period starts with the next failure.
 */
async function periodStillOpen(context: WatchContext, note: HealthNote | undefined): Promise<HealthNote | undefined> {
  if (note === undefined || note.failingSince === null) return note;
  const row = await context.db
    .prepare("SELECT failing_since FROM webhook_endpoints WHERE id = ?1")
    .bind(context.endpointId)
    .first<{ failing_since: string | null }>();
  // A note is kept with a failingSince only once the row has it: null there is an enabling's.
  return row !== null && row.failing_since === null
    ? { failingSince: null, lastDeliveredAt: note.lastDeliveredAt, writtenAt: 0, toldFailing: null }
    : note;
}

/** The notice a run before this one made and did not hand to every recipient. */
async function handOwedNotice(context: WatchContext): Promise<void> {
  const owed = context.kv.get<OwedNotice>("owedNotice");
  if (owed === undefined) return;
  // Made already, or never (its transaction failed: the rule says again whether it is due).
  await handNotice(context, await madeNotice(context.db, context.endpointId, owed.type, owed.periodFrom));
}

/** Each recipient's lane handed the notice; then it is owed no more. */
async function handNotice(context: WatchContext, id: number | null): Promise<void> {
  if (id !== null) {
    const recipients = await noticeRecipients(context.db, id);
    await Promise.all(recipients.map((recipient) => context.handToLane(recipient, [String(-id)])));
  }
  context.kv.delete("owedNotice");
}
