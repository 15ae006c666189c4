/** Background work waiting on a timer or a client, which the tests' request helper does not wait for. */
export const WAITS_OUTSIDE = Symbol("background work that waits on a timer or on the client");

export function waitsOutside<T>(work: Promise<T>): Promise<T> {
  return Object.assign(work, { [WAITS_OUTSIDE]: true });
}

export const isWaitingOutside = (work: Promise<unknown>): boolean => WAITS_OUTSIDE in work;
