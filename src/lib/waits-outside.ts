/**
 * Background work (waitUntil) that waits on something no request controls: a
 * timer (a lease's expiry, a batch of refusals gathering) or a client reading
 * its body (a list's cache copy is written as the client reads). Marked so
 * whatever waits for a request's background work to finish (the tests'
 * request helper) waits for everything else, and not for these.
 */
export const WAITS_OUTSIDE = Symbol("background work that waits on a timer or on the client");

export function waitsOutside<T>(work: Promise<T>): Promise<T> {
  return Object.assign(work, { [WAITS_OUTSIDE]: true });
}

export const isWaitingOutside = (work: Promise<unknown>): boolean => WAITS_OUTSIDE in work;
