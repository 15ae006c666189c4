import { pacedCopy } from "../../lib/paced-copy";
import { waitsOutside } from "../../lib/waits-outside";
import { TtlCache } from "../../lib/ttl-cache";

/**
 * Unchanged versions of the order list from the Cache API (docs/design/order-list.md#the-cache), keyed by version tag
 * and nothing a client sends, so an entry is only served for the version it was built from.
 */
export const ORDER_LIST_CACHE_NAME = "store-orders:order-lists";

/** Bumped whenever the same rows would be written differently, so a deploy never serves the previous code's bodies. */
const LIST_FORMAT = 1;

const TTL_SECONDS = 600;

export const orderListCacheKey = (baseUrl: string, version: string) =>
  new Request(`${baseUrl}/store/orders?version=${encodeURIComponent(version)}&format=${LIST_FORMAT}`);

/** Each fill's body under a key of its own: a late, cut-short upload never replaces a whole body. */
const fillBodyKey = (baseUrl: string, version: string, fill: string) =>
  new Request(`${orderListCacheKey(baseUrl, version).url}&fill=${fill}`);

/** The fill whose body the marker vouches for. */
const FILL_HEADER = "X-Body-Fill";

export interface CacheUse {
  /** Keeps the cache's writes going after the response (ctx.waitUntil). */
  background(work: Promise<unknown>): void;
  onError(error: unknown): void;
}

/**
 * A body is served only with its marker, written once it was stored whole on purpose: a runtime may store an aborted
 * upload, and checking the body as it streams would cost every hit its bytes through JavaScript.
 */
const wholeMarkerKey = (baseUrl: string, version: string) =>
  new Request(`${orderListCacheKey(baseUrl, version).url}&whole=1`);

/** The body's size, written on its marker (the cache declares no length on a body stored as it streamed). */
const BYTES_HEADER = "X-Body-Bytes";

/** A fill a marker vouched for: its id and its body's size (-1 when the marker predates sizes). */
interface WholeFill {
  fill: string;
  bytes: number;
}

/** Which fill of each recent version a marker said is whole, so the next hit is one lookup. */
export class WholeFills {
  readonly #fills = new TtlCache<string, WholeFill>(16);

  known(version: string, now: number): WholeFill | undefined {
    return this.#fills.get(version, now);
  }

  /** No longer than the body is kept (the cache lets it go by then). */
  learn(version: string, fill: WholeFill, now: number): void {
    this.#fills.set(version, fill, TTL_SECONDS * 1000, now);
  }

  forget(version: string): void {
    this.#fills.delete(version);
  }

  clear(): void {
    this.#fills.clear();
  }
}

/**
 * The cached body of this version and its size, if stored whole: one lookup when `fills` knows it, else the marker
 * first. A failing cache is a miss, never a failed list.
 */
export async function cachedOrderList(
  baseUrl: string,
  version: string,
  use: CacheUse,
  fills: WholeFills = new WholeFills(),
): Promise<{ body: ReadableStream<Uint8Array>; bytes: number } | undefined> {
  try {
    const cache = await caches.open(ORDER_LIST_CACHE_NAME);
    const known = fills.known(version, Date.now());
    if (known) {
      const hit = await cache.match(fillBodyKey(baseUrl, version, known.fill));
      if (hit?.body) return { body: hit.body, bytes: known.bytes };
      fills.forget(version);
    }
    const marker = await cache.match(wholeMarkerKey(baseUrl, version));
    const fill = marker?.headers.get(FILL_HEADER);
    if (!marker || !fill) return undefined;
    const hit = await cache.match(fillBodyKey(baseUrl, version, fill));
    if (!hit?.body) return undefined;
    const whole = { fill, bytes: Number(marker.headers.get(BYTES_HEADER) ?? -1) };
    fills.learn(version, whole, Date.now());
    return { body: hit.body, bytes: whole.bytes };
  } catch (error) {
    use.onError(error);
    return undefined;
  }
}

export interface CacheFill extends CacheUse {
  /** Whether the body that was read is still this version's whole list (asked once it has ended). */
  stillCurrent(): Promise<boolean>;
  /** The body's size, known once it has ended. */
  bytes: Promise<number>;
  /** Told of the fill once its marker is stored, so this isolate's next hit is one lookup. */
  fills: WholeFills;
}

/**
 * The body for the client, stored under its version as it streams (paced: lib/paced-copy.ts). Only a complete body
 * still current gets its marker; any other (a failed read, a client gone, a write meanwhile, a failed upload) is
 * deleted once its upload settles.
 */
export function cachingOrderList(
  baseUrl: string,
  version: string,
  body: ReadableStream<Uint8Array>,
  fill: CacheFill,
): ReadableStream<Uint8Array> {
  let kept: boolean | undefined;
  return pacedCopy(body, {
    open() {
      const { readable, writable } = new TransformStream<Uint8Array, Uint8Array>();
      const entry = new Response(readable, {
        headers: { "Content-Type": "application/json", "Cache-Control": `max-age=${TTL_SECONDS}` },
      });
      const id = crypto.randomUUID();
      const key = fillBodyKey(baseUrl, version, id);
      fill.background(
        waitsOutside(
          caches
            .open(ORDER_LIST_CACHE_NAME)
            .then(async (cache) => {
              let stored = false;
              try {
                await cache.put(key, entry);
                stored = true;
              } catch (error) {
                // A list found stale at its end was thrown away on purpose.
                if (kept !== false) fill.onError(error);
              }
              // A put that failed may still have left part of the body behind, even of a list the client had whole.
              if (stored && kept === true) {
                const bytes = await fill.bytes;
                const headers = {
                  "Cache-Control": `max-age=${TTL_SECONDS}`,
                  [BYTES_HEADER]: String(bytes),
                  [FILL_HEADER]: id,
                };
                await cache.put(wholeMarkerKey(baseUrl, version), new Response("", { headers }));
                fill.fills.learn(version, { fill: id, bytes }, Date.now());
              } else {
                await cache.delete(key);
              }
            })
            .catch(fill.onError),
        ),
      );
      return writable;
    },
    keep: async () => (kept = await fill.stillCurrent()),
  });
}
