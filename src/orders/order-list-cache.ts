import { pacedCopy } from "../lib/paced-copy";

/**
 * Unchanged versions of the order list from the Cache API (docs/design/order-list.md#the-cache).
 * An entry is keyed by the list's version tag and nothing a client sends, so
 * it is only ever served for exactly the version it was built from; it
 * expires on its own, since the cache is not a store of record.
 */
const CACHE_NAME = "store-orders:order-lists";

/** Bumped whenever the same rows would be written differently, so a deploy never serves the previous code's bodies. */
const LIST_FORMAT = 1;

const TTL_SECONDS = 600;

const keyOf = (baseUrl: string, version: string) =>
  new Request(`${baseUrl}/store/orders?version=${encodeURIComponent(version)}&format=${LIST_FORMAT}`);

/** The cached body of this version, if there is one. A cache that fails is a miss, never a failed list. */
export async function cachedOrderList(
  baseUrl: string,
  version: string,
  onError: (error: unknown) => void,
): Promise<ReadableStream<Uint8Array> | undefined> {
  try {
    const hit = await (await caches.open(CACHE_NAME)).match(keyOf(baseUrl, version));
    return hit?.body ?? undefined;
  } catch (error) {
    onError(error);
    return undefined;
  }
}

export interface CacheFill {
  /** Keeps the cache's write going after the response (ctx.waitUntil). */
  background(work: Promise<unknown>): void;
  /** Whether the body that was read is still this version's whole list (asked once it has ended). */
  stillCurrent(): Promise<boolean>;
  onError(error: unknown): void;
}

/**
 * The body for the client, stored under its version as it streams (paced, so
 * memory stays flat: lib/paced-copy.ts). Only a complete body that is still
 * the version's is stored: a failed read, a client gone away or a write
 * during the read leaves nothing behind.
 */
export function cachingOrderList(baseUrl: string, version: string, body: ReadableStream<Uint8Array>, fill: CacheFill): ReadableStream<Uint8Array> {
  let kept: boolean | undefined;
  return pacedCopy(body, {
    open() {
      const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
      const entry = new Response(readable, {
        headers: { "Content-Type": "application/json", "Cache-Control": `max-age=${TTL_SECONDS}` },
      });
      const key = keyOf(baseUrl, version);
      fill.background(
        caches.open(CACHE_NAME).then(async (cache) => {
          try {
            await cache.put(key, entry);
          } catch (error) {
            // A list found stale at its end was thrown away on purpose.
            if (kept !== false) fill.onError(error);
          }
          // Aborting the upload is not always enough to keep it out (Miniflare
          // stores a body aborted after its last byte), so a stale one is deleted too.
          if (kept === false) await cache.delete(key);
        }).catch(fill.onError),
      );
      return writable;
    },
    keep: async () => (kept = await fill.stillCurrent()),
  });
}
