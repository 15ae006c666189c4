import { newerBookmark } from "../lib/bookmark";
import type { VersionMemory } from "./recent-version";

/**
 * The bookmark of the newest cancel through this isolate, for `keepMs`
 * (isolate-memory.ts): reads read at least that new, so whoever cancelled
 * through this isolate never lists from a replica that has not seen the
 * cancel yet. The promise holds per isolate (docs/api.md#orders): a cancel
 * through another isolate is seen with its bookmark.
 */
export class OwnWrites {
  #latest: { bookmark: string; at: number } | undefined;

  constructor(private readonly keepMs: number) {}

  /**
   * A cancel that changed an order (or found it cancelled) left `bookmark`; an older one never replaces a newer one.
   */
  note(bookmark: string | null, now: number): void {
    if (bookmark === null) return;
    const kept = this.#current(now);
    this.#latest = { bookmark: newerBookmark(kept, bookmark)!, at: now };
  }

  /** The bookmark a read must be at least as new as: the newer of the client's and this isolate's latest cancel. */
  floor(clientBookmark: string | undefined, now: number): string | undefined {
    return newerBookmark(clientBookmark, this.#current(now));
  }

  clear(): void {
    this.#latest = undefined;
  }

  #current(now: number): string | undefined {
    return this.#latest && now - this.#latest.at < this.keepMs ? this.#latest.bookmark : undefined;
  }
}

/**
 * Where a read of the list starts: the bookmark it reads at least as new as, and the mark `versions` needs to keep what
 * it reads.
 */
export interface ReadStart {
  floor: string | undefined;
  began: number;
}

/**
 * Takes both at one moment, the read's start: a cancel through this isolate
 * after it is not in the floor, and is exactly what makes `versions` refuse
 * to remember what the read then finds (it may come from a replica behind the
 * cancel). Taken apart, a cancel in between would leave a version read below
 * the new floor remembered and served to the canceller.
 */
export function startRead(
  versions: VersionMemory,
  ownWrites: OwnWrites,
  clientBookmark: string | undefined,
  now: number,
): ReadStart {
  return { floor: ownWrites.floor(clientBookmark, now), began: versions.beginRead() };
}
