import { useEffect, useRef } from "hono/jsx/dom";
import { call, messageOf } from "../../kit/api-client";
import { ORDER_EVENT_TYPES, type OrderEvent, type OrderEventPage } from "../../kit/api-types";
import { Notice, When, TableHead } from "../../kit/parts";
import type { View } from "../console-view";
import { useLiveState } from "../../kit/live-state";

/** The most events the page keeps on screen; older ones leave as new ones come. */
const SHOWN = 200;
const PAGE = 100;

const feedPath = (after: string | undefined, type: string, extra: string) => {
  const params = new URLSearchParams();
  if (after) params.set("after", after);
  if (type) params.set("types", type);
  return `/store/order-events?${params}${extra}`;
};

const EventRow = ({ event }: { event: OrderEvent }) => (
  <tr data-event-id={event.id}>
    <td>
      <code>{event.id}</code>
    </td>
    <td>
      <code>{event.type}</code>
    </td>
    <td>
      <When iso={event.createdAt} />
    </td>
    <td>
      <code>{String(event.order.id)}</code>
    </td>
    <td>{event.order.status ?? "—"}</td>
  </tr>
);

/**
 * The event feed, filtered by type, a page at a time in its order; or a live tail: long polls (wait=20) from the
 * newest event on, each new event shown at the top as it is committed.
 */
function Events() {
  const [type, setType] = useLiveState("");
  const [tailing, setTailing] = useLiveState(false);
  const [events, setEvents] = useLiveState<OrderEvent[]>([]);
  const [next, setNext] = useLiveState<string>();
  const [more, setMore] = useLiveState(false);
  const [loaded, setLoaded] = useLiveState(false);
  const [error, setError] = useLiveState<string>();
  const pages = useRef<AbortController>(null);

  /** One page of the feed, oldest first, after what is shown. */
  const page = async (after: string | undefined, signal: AbortSignal) => {
    try {
      const got = await call<OrderEventPage>("GET", feedPath(after, type, `&limit=${PAGE}`), { signal });
      setEvents((shown) => [...shown, ...got.data]);
      setNext(got.nextCursor);
      setMore(got.data.length >= PAGE);
      setLoaded(true);
    } catch (failure) {
      if ((failure as Error).name !== "AbortError") setError(messageOf(failure));
    }
  };

  /** From the newest event on, long polls of 20 s one after another, each new event at the top. */
  const tail = async (signal: AbortSignal) => {
    try {
      for (let after = "latest"; !signal.aborted; ) {
        const got = await call<OrderEventPage>("GET", feedPath(after, type, `&limit=${PAGE}&wait=20`), { signal });
        setEvents((shown) => [...[...got.data].reverse(), ...shown].slice(0, SHOWN));
        after = got.nextCursor;
      }
    } catch (failure) {
      if ((failure as Error).name !== "AbortError") setError(messageOf(failure));
    }
  };

  /** What is shown starts over, in the same update as the choice, so no row of the last choice stays on screen. */
  const choose = (chosen: { type: string; tailing: boolean }) => {
    setType(chosen.type);
    setTailing(chosen.tailing);
    setEvents([]);
    setMore(false);
    setLoaded(false);
    setError(undefined);
  };

  useEffect(() => {
    const abort = new AbortController();
    pages.current = abort;
    void (tailing ? tail(abort.signal) : page(undefined, abort.signal));
    return () => abort.abort();
  }, [type, tailing]);

  return (
    <>
      <h1 tabindex={-1}>Events</h1>
      <div class="controls">
        <label for="events-type">Type</label>
        <select
          id="events-type"
          onChange={(event) => choose({ type: (event.target as HTMLSelectElement).value, tailing })}
        >
          <option value="">Every type</option>
          {ORDER_EVENT_TYPES.map((t) => (
            <option value={t}>{t}</option>
          ))}
        </select>
        <button type="button" aria-pressed={String(tailing)} onClick={() => choose({ type, tailing: !tailing })}>
          {tailing ? "Stop live tail" : "Start live tail"}
        </button>
      </div>
      <div>
        {error ? (
          <Notice text={error} kind="error" />
        ) : tailing ? (
          <p role="status" class="live">
            Live: new events appear at the top as they are committed.
          </p>
        ) : (
          loaded && events.length === 0 && <p role="status">No events in the last 30 days.</p>
        )}
      </div>
      <table id="events-table">
        <caption>{tailing ? "Newest first, as they are committed" : "Oldest first, the last 30 days"}</caption>
        <TableHead titles={["Event", "Type", "Committed", "Order", "Status"]} />
        <tbody>
          {events.map((event) => (
            <EventRow key={event.id} event={event} />
          ))}
        </tbody>
      </table>
      <button type="button" hidden={tailing || !more} onClick={() => void page(next, pages.current!.signal)}>
        Load more
      </button>
    </>
  );
}

export const EventsView: View = ({ session }) =>
  session.key.scopes.includes("orders:read") ? (
    <Events />
  ) : (
    <>
      <h1 tabindex={-1}>Events</h1>
      <Notice text="This key cannot read the event feed: it lacks the orders:read scope." kind="error" />
    </>
  );
