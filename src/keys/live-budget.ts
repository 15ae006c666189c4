/**
 * Whether a budget still has a key that may read what its webhooks carry
 * (`orders:read`: every event holds an order): they are delivered only while
 * it does (docs/api.md#webhook-endpoints). Checked where deliveries are made
 * (each endpoint's lane, with a 5 s cache), so a revocation stops them as
 * soon as a request's read of the key sees it, and an expiry with no action
 * at all; and failed for want of a live key only once KV agrees with itself
 * and has had time to spread the last change (docs/api.md#webhook-endpoints).
 */
import { callDependency } from "../lib/call-dependency";
import type { TtlCache } from "../lib/ttl-cache";
import { DEFAULT_SCOPES } from "../account/key-record";
import type { Scope } from "../framework/operations/scopes";
import { budgetPrefix, idName, type BudgetMember, type KeySummary } from "./kv-layout";

/**
 * How long one answer is kept per isolate: a revocation reaches deliveries this much later than KV has it, as it
 * reaches requests.
 */
const LIVENESS_CACHE_MS = 5_000;

/**
 * `unknown`: KV cannot tell yet (nothing listed, as for a key made a moment ago; a listing behind its writes; a change
 * too recent): asked again later.
 */
export type BudgetLiveness = "live" | "dead" | "unknown";

/** The scope a key needs for its budget's webhooks to be delivered. */
export const WEBHOOK_READER_SCOPE: Scope = "orders:read";

const isLive = (member: BudgetMember, now: number) =>
  !member.revokedAt && (!member.expiresAt || Date.parse(member.expiresAt) > now);
const readsOrders = (summary: Pick<KeySummary, "scopes"> | null) =>
  (summary?.scopes ?? DEFAULT_SCOPES).includes(WEBHOOK_READER_SCOPE);

/** What the budget's object says of its last key change (limiter-object.ts), for budgetLiveness(). */
export const keysChangedAtOf = (limiters: Env["ACCOUNTS"], budget: string) => () =>
  callDependency("rate limiter", () => limiters.getByName(budget).keysChangedAt());

/**
 * How long after a revocation or rotation KV may still show the budget as it was (its list lags about a minute): twice
 * that.
 */
export const KV_PROPAGATION_MS = 120_000;
/** KV entries one check reads at most, whatever the budget's history: two a key that the listing says may be live. */
export const MAX_ENTRY_READS = 50;

/**
 * Whether the budget has a live key that reads orders. The listing names its keys with what each said when it
 * was written; only those it says may be live are read (a key once stopped never works again), each entry
 * itself and its id entry, until the first live one, and no more than MAX_ENTRY_READS entries. A listing that
 * disagrees with the entries it names (one listed live reads as stopped, one listed is gone) is a listing
 * behind its writes: "unknown", and the lane tries again. "dead" only when they agree and the budget's object,
 * which every revocation and rotation tells (`keysChangedAt`), saw no change for longer than KV's propagation:
 * a lag never fails a delivery the owner may still want.
 */
export async function budgetLiveness(
  kv: KVNamespace,
  budget: string,
  cache: TtlCache<string, BudgetLiveness>,
  keysChangedAt: () => Promise<number>,
  now = Date.now(),
): Promise<BudgetLiveness> {
  const cached = cache.get(budget, now);
  if (cached !== undefined) return cached;
  const prefix = budgetPrefix(budget);
  let listed = false;
  let disagrees = false;
  let live = false;
  let entriesRead = 0;
  let cursor: string | undefined;
  pages: do {
    const page = await callDependency("KV", () => kv.list<BudgetMember>({ prefix, ...(cursor && { cursor }) }));
    for (const { name, metadata } of page.keys) {
      listed = true;
      if (metadata && !isLive(metadata, now)) continue;
      if (entriesRead + 2 > MAX_ENTRY_READS) {
        disagrees = true;
        break pages;
      }
      entriesRead += 2;
      // The key's scopes are on its id entry (a budget's entry holds only what a revocation changes first).
      const [read, summary] = await Promise.all([
        callDependency("KV", () => kv.getWithMetadata<BudgetMember>(name)),
        callDependency("KV", () => kv.getWithMetadata<KeySummary>(idName(name.slice(prefix.length)))),
      ]);
      // Listed live, and gone or stopped when read: the listing is behind the entry it names.
      if (read.value === null || !isLive(read.metadata ?? {}, now)) {
        disagrees = true;
        continue;
      }
      // Live by both entries: a budget entry written from an id entry read just before a revocation says live.
      if (summary.metadata !== null && !isLive(summary.metadata, now)) continue;
      if (readsOrders(summary.metadata)) {
        live = true;
        break pages;
      }
    }
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  let liveness: BudgetLiveness = live ? "live" : listed && !disagrees ? "dead" : "unknown";
  // Nothing listed: a key made a moment ago that the list does not show yet, or a budget whose keys all stopped
  // long enough ago to leave its listing (budget-entries-prune.ts). Its first key's own entry (the budget is named
  // after it, and no key is ever deleted) tells the two apart without waiting on the list.
  if (!listed) {
    const first = (await callDependency("KV", () => kv.getWithMetadata<KeySummary>(idName(budget)))).metadata;
    if (first !== null) liveness = isLive(first, now) && readsOrders(first) ? "live" : "dead";
  }
  if (liveness === "dead" && now - (await keysChangedAt()) < KV_PROPAGATION_MS) liveness = "unknown";
  cache.set(budget, liveness, LIVENESS_CACHE_MS, now);
  return liveness;
}
