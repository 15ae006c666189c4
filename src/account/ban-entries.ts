/**
 * Bans in force as KV entries (`ban:<account>`, expiring with the ban), so the operators' search lists banned accounts
 * in one call (docs/operations.md#operator-api). The object is the record; a lost entry hides a ban from the search
 * only, never from the limiter.
 */
export const BAN_PREFIX = "ban:";

/** Only a key's account is noticed: banned addresses must cost no KV write, nor crowd the search's list. */
export const noticesBansOf = (budget: string) => budget.startsWith("key_");

/** KV's shortest expiry: a ban shorter than this is listed a little longer than it lasts. */
const KV_MIN_TTL_SECONDS = 60;

export interface BanNotice {
  /** Unix seconds. */
  until: number;
}

/** What to do with the entry when the ban end moves from `before` to `after` (Unix seconds); undefined: nothing. */
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
