import { call, messageOf } from "../../kit/api-client";
import { h, notice, show, when } from "../../kit/dom";
import { ORDER_EVENT_TYPES, type OrderEvent, type OrderEventPage } from "../../kit/api-types";
import type { View } from "../console-view";

/** The most events the page keeps on screen; older ones leave as new ones come. */
const SHOWN = 200;

/**
 * The event feed, filtered by type, a page at a time in its order, and a
 * live tail: long polls (wait=20) from the newest event (after=latest), each
 * new event shown as it is committed.
 */
export const eventsView: View = (root, session) => {
  if (!session.key.scopes.includes("orders:read")) {
    show(
      root,
      h("h1", { tabindex: -1 }, "Events"),
      notice("This key cannot read the event feed: it lacks the orders:read scope.", "error"),
    );
    return;
  }
  const type = h(
    "select",
    { id: "events-type" },
    h("option", { value: "" }, "Every type"),
    ORDER_EVENT_TYPES.map((t) => h("option", { value: t }, t)),
  );
  const tailButton = h("button", { type: "button", "aria-pressed": "false" }, "Start live tail");
  const status = h("div", {});
  const body = h("tbody", {});
  const table = h(
    "table",
    { id: "events-table" },
    h("caption", {}),
    h(
      "thead",
      {},
      h(
        "tr",
        {},
        ["Event", "Type", "Committed", "Order", "Status"].map((title) => h("th", { scope: "col" }, title)),
      ),
    ),
    body,
  );
  let abort = new AbortController();
  let tailing = false;

  const query = (after: string | undefined, extra: string) => {
    const params = new URLSearchParams();
    if (after) params.set("after", after);
    if (type.value) params.set("types", type.value);
    return `/store/order-events?${params}${extra}`;
  };
  const rowOf = (event: OrderEvent) =>
    h(
      "tr",
      { "data-event-id": event.id },
      h("td", {}, h("code", {}, event.id)),
      h("td", {}, h("code", {}, event.type)),
      h("td", {}, when(event.createdAt)),
      h("td", {}, h("code", {}, String(event.order.id))),
      h("td", {}, event.order.status ?? "—"),
    );
  const prepend = (events: OrderEvent[]) => {
    body.prepend(...events.map(rowOf).reverse());
    while (body.rows.length > SHOWN) body.lastElementChild!.remove();
  };

  const append = (events: OrderEvent[]) => body.append(...events.map(rowOf));
  let next: string | undefined;
  const more = h("button", { type: "button", onclick: () => void page(abort.signal) }, "Load more");

  /** One page of the feed, in its order (oldest first), after what is shown. */
  const page = async (signal: AbortSignal) => {
    try {
      const got = await call<OrderEventPage>("GET", query(next, "&limit=100"), { signal });
      append(got.data);
      next = got.nextCursor;
      more.hidden = got.data.length < 100;
      show(status, body.rows.length === 0 ? h("p", { role: "status" }, "No events in the last 30 days.") : null);
    } catch (error) {
      if ((error as Error).name !== "AbortError") show(status, notice(messageOf(error), "error"));
    }
  };

  /** From the newest event on, each new one at the top as it is committed: long polls of 20 s, one after another. */
  const tail = async (signal: AbortSignal) => {
    try {
      let after = "latest";
      while (!signal.aborted) {
        const got = await call<OrderEventPage>("GET", query(after, "&limit=100&wait=20"), { signal });
        prepend(got.data);
        after = got.nextCursor;
      }
    } catch (error) {
      if ((error as Error).name !== "AbortError") show(status, notice(messageOf(error), "error"));
    }
  };

  const load = () => {
    abort.abort();
    abort = new AbortController();
    body.replaceChildren();
    next = undefined;
    table.caption!.textContent = tailing ? "Newest first, as they are committed" : "Oldest first, the last 30 days";
    more.hidden = tailing;
    if (tailing) {
      show(
        status,
        h("p", { role: "status", class: "live" }, "Live: new events appear at the top as they are committed."),
      );
      void tail(abort.signal);
    } else void page(abort.signal);
  };

  type.addEventListener("change", load);
  tailButton.addEventListener("click", () => {
    tailing = !tailing;
    tailButton.setAttribute("aria-pressed", String(tailing));
    tailButton.textContent = tailing ? "Stop live tail" : "Start live tail";
    load();
  });
  show(
    root,
    h("h1", { tabindex: -1 }, "Events"),
    h("div", { class: "controls" }, h("label", { for: "events-type" }, "Type"), type, tailButton),
    status,
    table,
    more,
  );
  load();
  return () => {
    tailing = false;
    abort.abort();
  };
};
