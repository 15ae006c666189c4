/** An account's keys a page at a time, by key id, from the account: a long history is paged, never read whole. */
import { accountStub } from "../account/account-stub";
import type { ApiKeyRecord } from "../account/key-record";
import { callDependency } from "../lib/call-dependency";

/** Keys one page shows at most. */
export const MAX_KEYS_PAGE = 100;

/** The keys after `after` (a key id), at most `limit`, whether more follow, and the last id the page shows. */
export async function accountKeysPage(
  accounts: Env["ACCOUNTS"],
  account: string,
  page: { after?: string; limit: number },
): Promise<{ keys: ApiKeyRecord[]; more: boolean; lastId: string | undefined }> {
  const { keys, more } = await callDependency("account", () =>
    accountStub(accounts, account).keys(page.after ?? "", page.limit),
  );
  return { keys, more, lastId: keys.at(-1)?.id };
}
