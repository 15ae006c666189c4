import { pacedCopy } from "../lib/paced-copy";

/**
 * Unchanged versions of the order list from the Cache API (docs/design/order-list.md#the-cache).
 * An entry is keyed by the list's version tag and nothing a client sends, so
 * it is only ever served for exactly the version it was built from; it
 * expires on its own, since the cache is not a store of record.
 */
export const ORDER_LIST_CACHE_NAME = "store-orders:order-lists";

/** Bumped whenever the same rows would be written differently, so a deploy never serves the previous code's bodies. */
const LIST_FORMAT = 1;

const TTL_SECONDS = 600;

export const orderListCacheKey = (baseUrl: string, version: string) =>
  new Request(`${baseUrl}/store/orders?version=${encodeURIComponent(version)}&format=${LIST_FORMAT}`);

export interface CacheUse {
  /** Keeps the cache's writes going after the response (ctx.waitUntil). */
  background(work: Promise<unknown>): void;
  onError(error: unknown): void;
}

/** `]`: the last byte of every whole list, and of no cut-short one (an Order holds no array, and none of its strings can hold a bracket). */
const LIST_END = 0x5d;

/**
 * The cached body of this version, if there is one. A cache that fails is a
 * miss, never a failed list. A body that turns out cut short (a runtime may
 * store an aborted upload) fails its stream, so the client sees a broken
 * response rather than a short list, and is dropped, so the next request
 * reads D1 (docs/design/order-list.md#the-cache).
 */
export async function cachedOrderList(baseUrl: string, version: string, use: CacheUse): Promise<ReadableStream<Uint8Array> | undefined> {
  try {
    const cache = await caches.open(ORDER_LIST_CACHE_NAME);
    const key = orderListCacheKey(baseUrl, version);
    const hit = await cache.match(key);
    if (!hit?.body) return undefined;
    let last = -1;
    return hit.body.pipeThrough(
      new TransformStream<Uint8Array, Uint8Array>({
        transform(chunk, controller) {
          if (chunk.length > 0) last = chunk[chunk.length - 1]!;
          controller.enqueue(chunk);
        },
        flush(controller) {
          if (last === LIST_END) return;
          use.background(cache.delete(key).catch(use.onError));
          const error = new Error(`the cached order list of version ${version} is cut short; dropped`);
          use.onError(error);
          controller.error(error);
        },
      }),
    );
  } catch (error) {
    use.onError(error);
    return undefined;
  }
}

export interface CacheFill extends CacheUse {
  /** Whether the body that was read is still this version's whole list (asked once it has ended). */
  stillCurrent(): Promise<boolean>;
}

/**
 * The body for the client, stored under its version as it streams (paced, so
 * memory stays flat: lib/paced-copy.ts). Only a complete body that is still
 * the version's is stored: a failed read, a client gone away or a write
 * during the read leaves nothing behind. Aborting the upload is not always
 * enough to keep it out (Miniflare stores an aborted upload, whole or cut
 * short), so whatever was not kept on purpose is deleted once the upload has
 * settled.
 */
export function cachingOrderList(baseUrl: string, version: string, body: ReadableStream<Uint8Array>, fill: CacheFill): ReadableStream<Uint8Array> {
  let kept: boolean | undefined;
  return pacedCopy(body, {
    open() {
      const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
      const entry = new Response(readable, {
        headers: { "Content-Type": "application/json", "Cache-Control": `max-age=${TTL_SECONDS}` },
      });
      const key = orderListCacheKey(baseUrl, version);
      fill.background(
        caches.open(ORDER_LIST_CACHE_NAME).then(async (cache) => {
          try {
            await cache.put(key, entry);
          } catch (error) {
            // A list found stale at its end was thrown away on purpose.
            if (kept !== false) fill.onError(error);
          }
          if (kept !== true) await cache.delete(key);
        }).catch(fill.onError),
      );
      return writable;
    },
    keep: async () => (kept = await fill.stillCurrent()),
  });
}
