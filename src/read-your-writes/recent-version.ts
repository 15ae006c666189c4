/**
 * The list's version as this isolate last read it (docs/design/order-list.md#the-cache). A list without a bookmark may
 * come from a lagging replica anyway, so for ORDER_LIST_VERSION_REUSE_MS it needs no D1 query at all. A cancel here
 * forgets it, and a read that began before the forget is never remembered.
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

/** One isolate's memory: one database, one version; `forgets` lets a read tell it began before one. */
export class VersionMemory {
  #recent: RecentVersion | undefined;
  #forgets = 0;

  get(now: number, reuseMs: number): string | undefined {
    return reusableVersion(this.#recent, now, reuseMs);
  }

  /** Call before reading the version; pass what it returns to remember(). */
  beginRead(): number {
    return this.#forgets;
  }

  /** Keeps a version read since `began`, unless a forget came in between. */
  remember(version: string, now: number, began: number): void {
    if (began === this.#forgets) this.#recent = { version, readAt: now };
  }

  forget(): void {
    this.#recent = undefined;
    this.#forgets += 1;
  }

  clear(): void {
    this.forget();
  }
}
