/**
 * A budget's listing keeps a key for 30 days after it stopped working
 * (docs/operations.md#api-keys), then the per-minute cron takes its entry
 * out, a page of the `budget:` entries a run, round and round: so a budget
 * rotated every day lists about a month of keys, not its whole history, and
 * what reads the listing (a webhook lane's liveness, GET /v2/keys, the
 * operators' budget page) costs the same in its third year as in its first.
 * The key's record and id entry stay (the operators' search finds it, the
 * audit in D1 keeps its story).
 */
import { callDependency } from "../lib/call-dependency";
import type { BudgetMember } from "./kv-layout";

/** How long a key that stopped working (revoked, or past its expiry) stays listed under its budget. */
export const STOPPED_KEYS_LISTED_MS = 30 * 86_400_000;
/** Where the prune keeps its place between runs: `{ "cursor": ... }`, or `{}` to start over. */
export const PRUNE_MARK = "layout:budget-prune";
/**
 * Entries a run lists: with a read of each entry it would take out and a delete, a run makes at most about
 * 200 KV calls, within the cron invocation's 1,000.
 */
export const PRUNE_PAGE = 100;

/** When a key stopped working as its budget entry says (Unix ms), or undefined while it works. */
function stoppedAt(member: BudgetMember, now: number): number | undefined {
  const moments = [member.revokedAt, member.expiresAt]
    .map((at) => (at === undefined ? NaN : Date.parse(at)))
    .filter((at) => at <= now);
  return moments.length === 0 ? undefined : Math.min(...moments);
}

function longStopped(member: BudgetMember | null, now: number): boolean {
  const at = member === null ? undefined : stoppedAt(member, now);
  return at !== undefined && now - at > STOPPED_KEYS_LISTED_MS;
}

/**
 * One run: the next page of budget entries, those of keys stopped for longer than STOPPED_KEYS_LISTED_MS deleted; how
 * many.
 */
export async function pruneBudgetEntries(kv: KVNamespace, now: number, page = PRUNE_PAGE): Promise<number> {
  const mark = await callDependency("KV", () => kv.get<{ cursor?: string }>(PRUNE_MARK, "json"));
  const listed = await callDependency("KV", () =>
    kv.list<BudgetMember>({ prefix: "budget:", limit: page, ...(mark?.cursor && { cursor: mark.cursor }) }),
  );
  let pruned = 0;
  for (const { name, metadata } of listed.keys) {
    if (!longStopped(metadata ?? null, now)) continue;
    // The entry itself, not the listing's word, which may be a minute old (an expiry moved later since).
    if (!longStopped((await callDependency("KV", () => kv.getWithMetadata<BudgetMember>(name))).metadata, now))
      continue;
    await callDependency("KV", () => kv.delete(name));
    pruned += 1;
  }
  await callDependency("KV", () =>
    kv.put(PRUNE_MARK, JSON.stringify(listed.list_complete ? {} : { cursor: listed.cursor })),
  );
  return pruned;
}
