/**
 * Keys stored before each key had an entry under its budget
 * (docs/operations.md#api-keys) are given one by the per-minute cron, a page
 * of `id:` entries a run, until a mark says every key has one. From then on
 * finding a budget's keys never lists the whole namespace: without the mark,
 * a budget with no live key would list every key on each of its lanes' runs.
 *
 * Compatibility: it can go once every deployment's KV holds the mark
 * (`wrangler kv key get layout:budget-entries --binding API_KEYS --env <name>`
 * answers `{"done":true}`), together with the whole-namespace scan it
 * stands in for in live-budget.ts and the prune's wait on it.
 */
import { callDependency } from "../lib/call-dependency";
import { budgetEntry, idName, type KeySummary } from "./kv-layout";

/**
 * Where the backfill keeps its place: `{ "cursor": ... }` between runs, `{ "done": true }` once every key has its
 * budget entry.
 */
export const BUDGET_ENTRIES_MARK = "layout:budget-entries";

/**
 * `id:` entries a run reads: with one bulk read per 100 and a write per key
 * missing its entry, a run makes at most about 510 KV calls, half of an
 * invocation's 1,000 subrequests, leaving the cron's other work its share.
 */
export const BACKFILL_PAGE = 500;
/** KV's bulk read takes at most 100 names. */
const BULK_READ = 100;

type Mark = { done: true } | { cursor: string };

/** Whether every key has its budget entry, so that a budget's own list is the whole of it. */
export async function budgetEntriesComplete(kv: KVNamespace): Promise<boolean> {
  const mark = await callDependency("KV", () => kv.get<Mark>(BUDGET_ENTRIES_MARK, "json"));
  return mark !== null && "done" in mark;
}

/** One run: the next page of keys, each missing budget entry written; whether the backfill is done. */
export async function backfillBudgetEntries(kv: KVNamespace, page = BACKFILL_PAGE): Promise<"done" | "more"> {
  const mark = await callDependency("KV", () => kv.get<Mark>(BUDGET_ENTRIES_MARK, "json"));
  if (mark !== null && "done" in mark) return "done";
  const prefix = idName("");
  const listed = await callDependency("KV", () =>
    kv.list<KeySummary>({ prefix, limit: page, ...(mark && { cursor: mark.cursor }) }),
  );
  const entries = listed.keys.flatMap(({ name, metadata }) =>
    metadata ? [budgetEntry({ id: name.slice(prefix.length), ...metadata })] : [],
  );
  for (let start = 0; start < entries.length; start += BULK_READ) {
    const chunk = entries.slice(start, start + BULK_READ);
    const stored = await callDependency("KV", () => kv.get(chunk.map(({ key }) => key)));
    // Only missing entries are written: one that exists may be a revocation newer than the id entry listed here.
    for (const { key, metadata } of chunk.filter(({ key }) => stored.get(key) == null)) {
      await callDependency("KV", () => kv.put(key, "", { metadata }));
    }
  }
  const next: Mark = listed.list_complete ? { done: true } : { cursor: listed.cursor };
  await callDependency("KV", () => kv.put(BUDGET_ENTRIES_MARK, JSON.stringify(next)));
  return listed.list_complete ? "done" : "more";
}
