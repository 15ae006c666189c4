/**
 * Bans in force, as KV entries (`ban:<account>`, expiring with the ban), so
 * the operators' key search can say which accounts are banned from one KV
 * list call rather than a call to every account
 * (docs/operations.md#operator-api). The object is the record of a ban; an
 * entry is its notice: written when a ban starts, deleted when an operator
 * lifts it, gone by itself when it ends. Losing one (a failed write) hides a
 * ban from the search only, never from the limiter.
 */
export const BAN_PREFIX = "ban:";

/**
 * Only a key's account is noticed: it is named by its first key's id
 * (account/key-record.ts, KeyId). Address groups and operators' sessions
 * are counted by objects too, but the key search never shows them, and a
 * spray of banned addresses must neither cost a KV write each nor push the
 * keys' notices out of the one list call the search makes.
 */
export const noticesBansOf = (budget: string) => budget.startsWith("key_");

/** KV's shortest expiry: a ban shorter than this is listed a little longer than it lasts. */
const KV_MIN_TTL_SECONDS = 60;

export interface BanNotice {
  /** Unix seconds. */
  until: number;
}

/**
 * What to do with `account`'s entry when its ban end moves from `before` to `after` (Unix seconds) at `now`; undefined:
 * nothing.
 */
export function banNoticeChange(
  before: number,
  after: number,
  now: number,
): { put: BanNotice } | { remove: true } | undefined {
  if (after > now && after !== before) return { put: { until: after } };
  if (after <= now && before > now) return { remove: true };
  return undefined;
}

export async function writeBanNotice(
  kv: KVNamespace,
  budget: string,
  change: NonNullable<ReturnType<typeof banNoticeChange>>,
  now: number,
): Promise<void> {
  if ("remove" in change) return kv.delete(`${BAN_PREFIX}${budget}`);
  const expiration = Math.max(Math.ceil(change.put.until), Math.ceil(now) + KV_MIN_TTL_SECONDS);
  await kv.put(`${BAN_PREFIX}${budget}`, "", { expiration, metadata: change.put });
}

/** The accounts banned now, by one list call (a thousand bans; more are not expected, and the rest are not listed). */
export async function bannedAccounts(kv: KVNamespace, now: number): Promise<Map<string, number>> {
  const listed = await kv.list<BanNotice>({ prefix: `${BAN_PREFIX}key_` });
  const banned = new Map<string, number>();
  for (const { name, metadata } of listed.keys)
    if (metadata && metadata.until > now) banned.set(name.slice(BAN_PREFIX.length), metadata.until);
  return banned;
}
