/**
 * Whether a budget still has a key that may call the API: webhooks are
 * delivered only while it does (docs/api.md#webhook-endpoints). Checked
 * where deliveries are made, so a revocation stops them within KV's
 * propagation, and an expiry with no action at all.
 */
import { callDependency } from "../lib/dependency";
import type { TtlCache } from "../lib/ttl-cache";
import { budgetOf } from "./api-key-record";
import { budgetPrefix, idName, type BudgetMember, type KeySummary } from "./layout";

/** How long one answer is kept per isolate: a revocation reaches deliveries this much later than KV has it, as it reaches requests. */
const LIVENESS_CACHE_MS = 5_000;

const isLive = (member: BudgetMember, now: number) => !member.revokedAt && (!member.expiresAt || Date.parse(member.expiresAt) > now);

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

export async function budgetHasLiveKey(kv: KVNamespace, budget: string, cache: TtlCache<string, boolean>, now = Date.now()): Promise<boolean> {
  const cached = cache.get(budget, now);
  if (cached !== undefined) return cached;
  const members = await listAll<BudgetMember>(kv, budgetPrefix(budget));
  // A budget whose keys were all stored before budgets were listed: its keys are found among every key's id entry.
  const live =
    members.length > 0
      ? members.some(({ metadata }) => isLive(metadata ?? {}, now))
      : (await listAll<KeySummary>(kv, idName(""))).some(
          ({ name, metadata }) => metadata !== null && budgetOf({ id: name.slice(idName("").length), budget: metadata.budget }) === budget && isLive(metadata, now),
        );
  cache.set(budget, live, LIVENESS_CACHE_MS, now);
  return live;
}
