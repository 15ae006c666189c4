/**
 * Whether a budget still has a key that may read what its webhooks carry
 * (`orders:read`: every event holds an order): they are delivered only while
 * it does (docs/api.md#webhook-endpoints). Checked where deliveries are made
 * (each endpoint's lane, with a 5 s cache), so a revocation stops them as
 * soon as a request's read of the key sees it, and an expiry with no action
 * at all.
 */
import { callDependency } from "../lib/dependency";
import type { TtlCache } from "../lib/ttl-cache";
import { budgetOf, DEFAULT_SCOPES } from "./api-key-record";
import type { Scope } from "../framework/operations/scopes";
import { budgetPrefix, idName, type BudgetMember, type KeySummary } from "./layout";
import { budgetEntriesComplete } from "./budget-entries-backfill";

/** How long one answer is kept per isolate: a revocation reaches deliveries this much later than KV has it, as it reaches requests. */
const LIVENESS_CACHE_MS = 5_000;

/** `unknown`: no key of the budget is listed at all, as for a key made a moment ago that KV's list does not show yet. */
export type BudgetLiveness = "live" | "dead" | "unknown";

/** The scope a key needs for its budget's webhooks to be delivered. */
export const WEBHOOK_READER_SCOPE: Scope = "orders:read";

const isLive = (member: BudgetMember, now: number) => !member.revokedAt && (!member.expiresAt || Date.parse(member.expiresAt) > now);
const reads = (summary: Pick<KeySummary, "scopes"> | null) => (summary?.scopes ?? DEFAULT_SCOPES).includes(WEBHOOK_READER_SCOPE);

async function listAll<M>(kv: KVNamespace, prefix: string): Promise<{ name: string; metadata: M | null }[]> {
  const entries: { name: string; metadata: M | null }[] = [];
  let cursor: string | undefined;
  do {
    const page = await callDependency("KV", () => kv.list<M>({ prefix, ...(cursor && { cursor }) }));
    entries.push(...page.keys.map(({ name, metadata }) => ({ name, metadata: metadata ?? null })));
    cursor = page.list_complete ? undefined : page.cursor;
  } while (cursor);
  return entries;
}

export async function budgetLiveness(kv: KVNamespace, budget: string, cache: TtlCache<string, BudgetLiveness>, now = Date.now()): Promise<BudgetLiveness> {
  const cached = cache.get(budget, now);
  if (cached !== undefined) return cached;
  // The list names the budget's keys; each entry is then read itself: a list's metadata can lag a revocation by
  // KV's list propagation (about a minute), a read of the entry by no more than a request's read of the key does.
  const prefix = budgetPrefix(budget);
  const listed = await listAll<BudgetMember>(kv, prefix);
  const members = await Promise.all(
    listed.map(async ({ name, metadata }) => {
      // The key's scopes are on its id entry (a budget's entry holds only what a revocation changes first).
      const [read, summary] = await Promise.all([
        callDependency("KV", () => kv.getWithMetadata<BudgetMember>(name)),
        callDependency("KV", () => kv.getWithMetadata<KeySummary>(idName(name.slice(prefix.length)))),
      ]);
      return { member: read.value === null ? (metadata ?? {}) : (read.metadata ?? {}), summary: summary.metadata };
    }),
  );
  // Live by both entries: a budget entry the backfill wrote from an id entry read just before a revocation says live.
  const live = ({ member, summary }: (typeof members)[number]) => isLive(member, now) && (summary === null || isLive(summary, now)) && reads(summary);
  let liveness: BudgetLiveness = members.some(live) ? "live" : members.length > 0 ? "dead" : "unknown";
  // Keys stored before budgets were listed have no entry of their own here (a rotated pair may have one key with and one
  // without) until the cron's backfill has given every key one: till then they are found among every key's id entry,
  // at the cost of listing them all.
  if (liveness !== "live" && !(await budgetEntriesComplete(kv))) {
    const legacy = (await listAll<KeySummary>(kv, idName(""))).filter(
      ({ name, metadata }) => metadata !== null && budgetOf({ id: name.slice(idName("").length), budget: metadata.budget }) === budget,
    );
    if (legacy.some(({ metadata }) => isLive(metadata!, now) && reads(metadata))) liveness = "live";
    else if (legacy.length > 0) liveness = "dead";
  }
  cache.set(budget, liveness, LIVENESS_CACHE_MS, now);
  return liveness;
}
