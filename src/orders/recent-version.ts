/**
 * The list's version as this isolate last read it (README, "Orders"). A list
 * without a bookmark may be served by a replica that lags the primary, so
 * reusing a version read a moment ago promises nothing new: within
 * ORDER_LIST_VERSION_REUSE_MS of a read, an unbookmarked list (with the
 * cache, an unchanged one) needs no D1 query at all. A cancel through this
 * isolate forgets it, so the canceller's next list reads afresh.
 */
export interface RecentVersion {
  version: string;
  /** When it was read, ms since the epoch. */
  readAt: number;
}

/** The version to reuse at `now`, if there is one young enough. */
export function reusableVersion(recent: RecentVersion | undefined, now: number, reuseMs: number): string | undefined {
  if (recent === undefined || reuseMs <= 0) return undefined;
  const age = now - recent.readAt;
  return age >= 0 && age < reuseMs ? recent.version : undefined;
}

/** One per isolate: an isolate serves one database. */
let recent: RecentVersion | undefined;

export const recentVersion = {
  get: (now: number, reuseMs: number) => reusableVersion(recent, now, reuseMs),
  remember: (version: string, now: number) => {
    recent = { version, readAt: now };
  },
  forget: () => {
    recent = undefined;
  },
};
