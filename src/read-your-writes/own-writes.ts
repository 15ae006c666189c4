import { newerBookmark } from "../lib/bookmark";
import type { VersionMemory } from "./recent-version";

/** The newest cancel's bookmark for `keepMs`: a canceller never lists from a replica behind its cancel. */
export class OwnWrites {
  #latest: { bookmark: string; at: number } | undefined;

  constructor(private readonly keepMs: number) {}

  /** A cancel left `bookmark`; an older one never replaces a newer one. */
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

/** Where a list's read starts: the bookmark it reads at least as new as, and the mark `versions` needs. */
export interface ReadStart {
  floor: string | undefined;
  began: number;
}

/** Takes both at one moment, the read's start, so a cancel after it makes `versions` refuse what the read finds. */
export function startRead(
  versions: VersionMemory,
  ownWrites: OwnWrites,
  clientBookmark: string | undefined,
  now: number,
): ReadStart {
  return { floor: ownWrites.floor(clientBookmark, now), began: versions.beginRead() };
}
