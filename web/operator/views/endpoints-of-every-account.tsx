import { apiPath, messageOf } from "../../kit/api-client";
import { h, notice, show, when } from "../../kit/dom";
import { acting, admin } from "../operator-api";
import { DeliveryLog } from "../../kit/delivery-log";
import { mountView } from "../../kit/parts";
import type { WebhookDelivery } from "../../kit/api-types";
import type { OperatorEndpoint, OperatorView } from "../operator-api-types";

/**
 * Every endpoint of every account (GET /admin/webhook-endpoints): lock one
 * with a reason its owner is told, or unlock it; read any endpoint's delivery
 * log, as its owner does, with how its newest deliveries went.
 */
export const webhooksView: OperatorView = (root) => {
  const status = h("div", {});
  const list = h("div", { id: "webhook-list" });
  const log = h("section", { id: "endpoint-log", "aria-live": "polite" });

  const readLog = async (endpoint: OperatorEndpoint) => {
    try {
      const { data } = await admin<{ data: WebhookDelivery[] }>(
        "GET",
        apiPath("webhook-endpoints", { endpoint: endpoint.id }, "deliveries"),
      );
      const failed = data.filter((delivery) => delivery.outcome === "failed").length;
      const lastDelivered = data.find((delivery) => delivery.outcome === "delivered");
      const logTable = h("div", {});
      show(
        log,
        h("h2", { tabindex: -1 }, "Delivery log of ", h("code", {}, endpoint.url)),
        h(
          "p",
          { id: "endpoint-health" },
          `${failed} of the newest ${data.length} deliveries failed; the newest delivered: `,
          lastDelivered ? h("code", {}, lastDelivered.eventId) : "none",
        ),
        logTable,
      );
      mountView(logTable, <DeliveryLog deliveries={data} />);
      log.querySelector("h2")!.focus();
    } catch (error) {
      show(log, notice(messageOf(error), "error"));
    }
  };

  const act = acting(status, () => load());

  const row = (endpoint: OperatorEndpoint) => {
    const reasonId = `reason-${endpoint.id}`;
    const reason = h("input", { id: reasonId, type: "text", maxlength: 200, size: 8, autocomplete: "off" });
    const action =
      endpoint.status === "enabled"
        ? h(
            "form",
            {
              class: "row",
              onsubmit: (event: Event) => {
                event.preventDefault();
                void act(
                  () =>
                    admin("POST", apiPath("webhook-endpoints", { endpoint: endpoint.id }, "disable"), {
                      body: reason.value.trim() ? { reason: reason.value.trim() } : {},
                    }),
                  `Locked ${endpoint.id}: nothing more is delivered to it.`,
                );
              },
            },
            h("label", { for: reasonId }, "Reason for its owner"),
            reason,
            h("button", { type: "submit", class: "danger" }, "Lock"),
          )
        : h(
            "button",
            {
              type: "button",
              onclick: () =>
                void act(
                  () => admin("POST", apiPath("webhook-endpoints", { endpoint: endpoint.id }, "enable")),
                  `Unlocked ${endpoint.id}.`,
                ),
            },
            "Unlock",
          );
    return h(
      "tr",
      {},
      h(
        "td",
        {},
        h("code", {}, endpoint.url),
        h("br"),
        "of ",
        h("a", { href: `#/budget/${endpoint.budget}` }, h("code", {}, endpoint.budget)),
      ),
      h(
        "td",
        {},
        endpoint.status === "disabled"
          ? ["disabled ", when(endpoint.disabledAt), h("br"), endpoint.disabledReason ?? ""]
          : "enabled",
        h("br"),
        endpoint.failingSince
          ? h("strong", {}, "failing since ", when(endpoint.failingSince))
          : endpoint.lastDeliveredAt
            ? "delivering"
            : "no delivery yet",
        endpoint.lastDeliveredAt ? ["; last delivered ", when(endpoint.lastDeliveredAt)] : "",
      ),
      h(
        "td",
        {},
        action,
        h(
          "button",
          {
            type: "button",
            class: "quiet",
            "aria-label": `Delivery log of ${endpoint.url}`,
            onclick: () => void readLog(endpoint),
          },
          "Delivery log",
        ),
      ),
    );
  };

  const load = async () => {
    try {
      const { data } = await admin<{ data: OperatorEndpoint[] }>("GET", "/webhook-endpoints");
      show(
        list,
        data.length === 0
          ? h("p", {}, "No webhook endpoints.")
          : h(
              "table",
              {},
              h("caption", {}, "Every endpoint of every account"),
              h(
                "thead",
                {},
                h(
                  "tr",
                  {},
                  ["URL, of account", "Status and deliveries", "Actions"].map((title) =>
                    h("th", { scope: "col" }, title),
                  ),
                ),
              ),
              h("tbody", {}, data.map(row)),
            ),
      );
    } catch (error) {
      show(status, notice(messageOf(error), "error"));
    }
  };

  show(
    root,
    h("h1", { tabindex: -1 }, "Webhooks"),
    h(
      "p",
      {},
      "Locking an endpoint stops its deliveries; its owner sees that an operator locked it (never which) and the " +
        "reason given, and cannot undo it.",
    ),
    status,
    list,
    log,
  );
  void load();
};
