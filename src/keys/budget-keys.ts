/**
 * A budget's keys a page at a time, by key id (KV lists names in order): a
 * budget's listing keeps every key that stopped working for 30 days
 * (budget-entries-prune.ts), so a long history is paged, never read whole in
 * one request. A page lists KV once per 1,000 names the budget lists (a
 * month of keys is one list) and reads one id entry per key it shows.
 */
import { callDependency } from "../lib/call-dependency";
import { ApiKeyRecord } from "../account/key-record";
import { budgetPrefix, idName, type KeySummary } from "./kv-layout";

/** Keys one page shows at most. */
export const MAX_KEYS_PAGE = 100;

/**
 * The keys after `after` (a key id), at most `limit`, whether more follow, the last id the page passed (where
 * the next starts, whether or not its record could be read), and whether `id` is listed at all (anywhere in the
 * listing: a key made a moment ago elsewhere may not be yet).
 */
export async function budgetKeysPage(
  kv: KVNamespace,
  budget: string,
  page: { after?: string; limit: number; id?: string },
): Promise<{ keys: ApiKeyRecord[]; more: boolean; listsId: boolean; lastId: string | undefined }> {
  const prefix = budgetPrefix(budget);
  const ids: string[] = [];
  let listsId = false;
  let cursor: string | undefined;
  do {
    const listed = await callDependency("KV", () => kv.list({ prefix, ...(cursor && { cursor }) }));
    for (const { name } of listed.keys) {
      const id = name.slice(prefix.length);
      if (id === page.id) listsId = true;
      if (page.after === undefined || id > page.after) ids.push(id);
    }
    cursor = listed.list_complete ? undefined : listed.cursor;
  } while (cursor);
  const shown = ids.slice(0, page.limit);
  const keys = await Promise.all(
    shown.map(async (id) => {
      const summary = (await callDependency("KV", () => kv.getWithMetadata<KeySummary>(idName(id)))).metadata;
      const parsed = ApiKeyRecord.safeParse({ id, ...summary });
      return parsed.success ? [parsed.data] : [];
    }),
  );
  return { keys: keys.flat(), more: ids.length > page.limit, listsId, lastId: shown.at(-1) };
}
