import { h, when, type Child } from "./dom";
import type { WebhookDelivery } from "./api-types";

/**
 * An endpoint's delivery log as a table, newest first, each delivery with
 * its latest attempts behind a disclosure. Both consoles draw it: the
 * callers' with a retry for a failed delivery (`action`), the operators'
 * read-only. What the reader opened stays open when `into` is drawn again.
 */
export function deliveryLog(
  into: HTMLElement,
  data: readonly WebhookDelivery[],
  action: (delivery: WebhookDelivery) => Child = () => "",
): HTMLElement {
  const open = new Set(
    [...into.querySelectorAll("tr[data-delivery-id] details[open]")].map(
      (details) => details.closest("tr")!.dataset.deliveryId,
    ),
  );
  const row = (delivery: WebhookDelivery) =>
    h(
      "tr",
      { "data-delivery-id": delivery.id, "data-outcome": delivery.outcome },
      h("td", {}, h("code", {}, delivery.eventId)),
      h(
        "td",
        {},
        delivery.outcome,
        delivery.lastStatus !== null
          ? ` (${delivery.lastStatus})`
          : delivery.lastError
            ? ` (${delivery.lastError})`
            : "",
        // A fifo endpoint's: it goes once the one before it is delivered or given up.
        delivery.heldBehind ? h("span", { class: "held" }, ` held behind ${delivery.heldBehind}`) : "",
      ),
      h(
        "td",
        {},
        h(
          "details",
          { open: open.has(delivery.id) },
          h("summary", {}, `${delivery.attempts} attempt${delivery.attempts === 1 ? "" : "s"}`),
          h(
            "ol",
            { class: "attempts" },
            delivery.attemptLog.map((attempt) =>
              h(
                "li",
                {},
                when(attempt.at),
                ` · ${attempt.status ?? "no answer"} · ${attempt.durationMs} ms`,
                attempt.error ? ` · ${attempt.error}` : "",
                attempt.response !== null ? h("pre", {}, attempt.response) : null,
              ),
            ),
          ),
        ),
      ),
      h("td", {}, delivery.nextAttemptAt ? when(delivery.nextAttemptAt) : "—"),
      h("td", {}, action(delivery)),
    );
  return data.length === 0
    ? h("p", {}, "No deliveries yet.")
    : h(
        "table",
        { class: "deliveries-table" },
        h("caption", {}, "Newest first, each with its latest attempts"),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Event", "Outcome", "Attempts", "Next attempt", ""].map((title) => h("th", { scope: "col" }, title)),
          ),
        ),
        h("tbody", {}, data.map(row)),
      );
}
