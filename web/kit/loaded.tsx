import { useEffect } from "hono/jsx/dom";
import { messageOf } from "./api-client";
import { Notice } from "./parts";
import { useLiveState } from "./live-state";

/** A read's state: under way, failed with the API's words, or its value. */
export type Loaded<T> = { kind: "loading" } | { kind: "failed"; message: string } | { kind: "shown"; value: T };

/** Reads with `read` now and whenever `deps` change, the read before aborted. */
export function useLoaded<T>(read: (signal: AbortSignal) => Promise<T>, deps: readonly unknown[]): Loaded<T> {
  const [loaded, setLoaded] = useLiveState<Loaded<T>>({ kind: "loading" });
  useEffect(() => {
    const abort = new AbortController();
    setLoaded({ kind: "loading" });
    read(abort.signal).then(
      (value) => setLoaded({ kind: "shown", value }),
      (error: Error) => error.name !== "AbortError" && setLoaded({ kind: "failed", message: messageOf(error) }),
    );
    return () => abort.abort();
  }, deps);
  return loaded;
}

/** What a read under way or failed says; nothing once it is shown. */
export const LoadStatus = ({ loaded }: { loaded: Loaded<unknown> }) => (
  <div>
    {loaded.kind === "loading" && <p role="status">Loading…</p>}
    {loaded.kind === "failed" && <Notice text={loaded.message} kind="error" />}
  </div>
);
