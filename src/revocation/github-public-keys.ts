/**
 * The keys GitHub signs secret scanning reports with, from SECRET_SCANNING_KEYS_URL: kept up to a day, fetched again
 * for an unknown identifier at most once a minute, since GitHub publishes the next key first and a flood of made-up
 * identifiers must not become a flood of fetches.
 */
import { z } from "zod";
import { importGithubKey } from "./github-signature";

/** How long a fetched list is trusted. */
export const KEYS_KEPT_MS = 86_400_000;
/** The least time between two fetches for one URL (an unknown identifier waits for the next). */
export const REFETCH_AFTER_MS = 60_000;

const Published = z.object({
  public_keys: z.array(z.object({ key_identifier: z.string(), key: z.string(), is_current: z.boolean().optional() })),
});

interface Held {
  /** Undefined until a fetch has succeeded. */
  keys: Map<string, CryptoKey> | undefined;
  fetchedAt: number;
  triedAt: number;
}

/** GitHub's keys could not be had, and none are in hand: the report is neither trusted nor refused (503). */
export class GithubKeysUnavailable extends Error {}

/** What an isolate holds of GitHub's published keys, by the URL they were fetched from. */
export class GithubPublicKeys {
  readonly #byUrl = new Map<string, Held>();
  /** One fetch at a time for a URL: reports arriving together wait on the same answer. */
  readonly #fetching = new Map<string, Promise<void>>();

  /** The key for `identifier`, refetched when a day old or unknown (once a minute); undefined if unpublished. */
  async find(url: string, identifier: string, fetcher: typeof fetch, now = Date.now()): Promise<CryptoKey | undefined> {
    const held = this.#byUrl.get(url);
    const fresh = held?.keys !== undefined && now - held.fetchedAt < KEYS_KEPT_MS;
    if (fresh && held.keys!.has(identifier)) return held.keys!.get(identifier);
    const fetching = this.#fetching.get(url);
    if (fetching) await fetching;
    else if (held === undefined || now - held.triedAt >= REFETCH_AFTER_MS) await this.#fetch(url, fetcher, now);
    const keys = this.#byUrl.get(url)?.keys;
    if (keys === undefined)
      throw new GithubKeysUnavailable(`GitHub's secret scanning keys at ${url} could not be fetched`);
    return keys.get(identifier);
  }

  #fetch(url: string, fetcher: typeof fetch, now: number): Promise<void> {
    let fetching = this.#fetching.get(url);
    if (!fetching) {
      const held = this.#byUrl.get(url);
      this.#byUrl.set(url, { keys: held?.keys, fetchedAt: held?.fetchedAt ?? 0, triedAt: now });
      fetching = fetchKeys(url, fetcher)
        .then(
          (keys) => void this.#byUrl.set(url, { keys, fetchedAt: now, triedAt: now }),
          // The list in hand, if any, is kept; the next try waits a minute.
          () => undefined,
        )
        .finally(() => this.#fetching.delete(url));
      this.#fetching.set(url, fetching);
    }
    return fetching;
  }

  clear(): void {
    this.#byUrl.clear();
    this.#fetching.clear();
  }
}

async function fetchKeys(url: string, fetcher: typeof fetch): Promise<Map<string, CryptoKey>> {
  const response = await fetcher(url, {
    headers: { Accept: "application/json", "User-Agent": "store-orders-secret-scanning" },
  });
  if (!response.ok) throw new Error(`GitHub's secret scanning keys at ${url} answered ${response.status}`);
  const published = Published.parse(await response.json());
  const keys = new Map<string, CryptoKey>();
  for (const { key_identifier, key } of published.public_keys) {
    // One key GitHub publishes in a form this cannot read does not take the others with it.
    const imported = await importGithubKey(key).catch(() => undefined);
    if (imported) keys.set(key_identifier, imported);
  }
  return keys;
}
