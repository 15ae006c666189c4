import { useCallback, useLayoutEffect, useRef, useState } from "hono/jsx/dom";

type Setter<T> = (next: T | ((previous: T) => T)) => void;

/**
 * useState whose setter does nothing once the component is gone. hono/jsx/dom draws a removed component again, into
 * its old place, on the second update it is sent; a read answered after the reader left the view would bring the view
 * back, and its polls with it. Every component of the consoles that sets state after an await uses this.
 */
export function useLiveState<T>(initial: T | (() => T)): [T, Setter<T>];
export function useLiveState<T = undefined>(): [T | undefined, Setter<T | undefined>];
export function useLiveState<T>(initial?: T | (() => T)): [T | undefined, Setter<T | undefined>] {
  const [value, setValue] = useState<T | undefined>(initial);
  const alive = useRef(true);
  // A layout effect: its cleanup is in place from the first commit, before any answer can arrive.
  useLayoutEffect(() => {
    alive.current = true;
    return () => {
      alive.current = false;
    };
  }, []);
  const set = useCallback<Setter<T | undefined>>((next) => {
    if (alive.current) setValue(next);
  }, []);
  return [value, set];
}
