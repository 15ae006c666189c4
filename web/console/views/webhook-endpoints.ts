import { apiPath, call, isId, messageOf } from "../../kit/api-client";
import { h, notice, show, shownOnce, when } from "../../kit/dom";
import { deliveryLog } from "../../kit/delivery-log";
import {
  ENDPOINT_NOTICE_TYPES,
  ORDER_EVENT_TYPES,
  type CreatedWebhookEndpoint,
  type RotatedWebhookSecret,
  type WebhookDelivery,
  type WebhookEndpoint,
  type WebhookTestResult,
} from "../../kit/api-types";
import type { View } from "../console-view";

const OVERLAPS = [
  { seconds: 3_600, label: "1 hour" },
  { seconds: 86_400, label: "1 day" },
  { seconds: 604_800, label: "7 days" },
  { seconds: 0, label: "None: the old secret stops now" },
];

/**
 * An endpoint whose every attempt fails, as its owner is warned on the list and on its page
 * (docs/api.md#failing-endpoints).
 */
const failingBanner = (endpoint: WebhookEndpoint) =>
  notice(
    `Every delivery to ${endpoint.url} has failed since ${new Date(endpoint.failingSince!).toLocaleString()}` +
      (endpoint.lastDeliveredAt
        ? ` (the last one through: ${new Date(endpoint.lastDeliveredAt).toLocaleString()}). `
        : " (none has ever got through). ") +
      "Check the receiver and the delivery log. By default the service tells this account's endpoints that name " +
      "webhook_endpoint.failing after a day of it, and disables an endpoint whose every attempt fails for 5 days.",
    "error",
  );

/** Checkboxes for the event types and the notices, each checked when `chosen` has it. */
function typePicker(
  idPrefix: string,
  chosen: readonly string[],
): { fieldset: HTMLFieldSetElement; value: () => string[] } {
  const boxes = [...ORDER_EVENT_TYPES, ...ENDPOINT_NOTICE_TYPES].map((type) =>
    h("input", { type: "checkbox", id: `${idPrefix}-${type}`, value: type, checked: chosen.includes(type) }),
  );
  const fieldset = h(
    "fieldset",
    { class: "types" },
    h("legend", {}, "Event types"),
    boxes.map((box) => h("span", { class: "choice" }, box, h("label", { for: box.id }, box.value))),
  );
  return { fieldset, value: () => boxes.filter((box) => box.checked).map((box) => box.value) };
}

/** #/webhooks: the account's endpoints and a form to add one; #/webhooks/<id>: one endpoint. */
export const webhooksView: View = (root, session, route) => {
  if (!session.key.scopes.includes("webhooks:manage")) {
    show(
      root,
      h("h1", { tabindex: -1 }, "Webhooks"),
      notice(
        `This key cannot manage webhooks: it lacks the webhooks:manage scope (it has ` +
          `${session.key.scopes.join(", ")}).`,
        "error",
      ),
    );
    return;
  }
  if (route[0] === undefined || route[0] === "") return endpointsView(root);
  // A part of the address is whoever sent the link's to write: nothing is drawn, nor sent, for what is not an endpoint
  // id.
  if (!isId("endpoint", route[0])) {
    return void show(
      root,
      h("h1", { tabindex: -1 }, "Endpoint"),
      notice(`${JSON.stringify(route[0].slice(0, 40))} is not an endpoint id: open one from the list.`, "error"),
    );
  }
  return endpointView(root, route[0]);
};

function endpointsView(root: HTMLElement): void {
  const list = h("div", {});
  const status = h("div", {});
  const load = async () => {
    try {
      const { data } = await call<{ data: WebhookEndpoint[] }>("GET", "/webhook-endpoints");
      const failing = data.filter((endpoint) => endpoint.status === "enabled" && endpoint.failingSince !== null);
      show(
        list,
        failing.map((endpoint) => failingBanner(endpoint)),
        data.length === 0
          ? h("p", {}, "No endpoints yet.")
          : h(
              "table",
              { id: "endpoints-table" },
              h("caption", {}, "Where this account's order events are delivered"),
              h(
                "thead",
                {},
                h(
                  "tr",
                  {},
                  ["URL", "Types", "Status", "Created"].map((title) => h("th", { scope: "col" }, title)),
                ),
              ),
              h(
                "tbody",
                {},
                data.map((endpoint) =>
                  h(
                    "tr",
                    {},
                    h("td", {}, h("a", { href: `#/webhooks/${endpoint.id}` }, endpoint.url)),
                    h("td", {}, endpoint.types.join(", ")),
                    h(
                      "td",
                      {},
                      endpoint.status,
                      endpoint.disabledBy ? ` (by ${endpoint.disabledBy})` : "",
                      endpoint.status === "enabled" && endpoint.failingSince
                        ? h("strong", {}, ", failing since ", when(endpoint.failingSince))
                        : "",
                    ),
                    h("td", {}, when(endpoint.createdAt)),
                  ),
                ),
              ),
            ),
      );
    } catch (error) {
      show(list, notice(messageOf(error), "error"));
    }
  };
  const url = h("input", {
    id: "new-endpoint-url",
    type: "url",
    required: true,
    placeholder: "https://example.com/webhooks",
    autocomplete: "off",
  });
  const types = typePicker("new-endpoint", ORDER_EVENT_TYPES);
  const signing = h(
    "select",
    { id: "new-endpoint-signing" },
    h("option", { value: "hmac" }, "HMAC secret (v1): you hold the secret"),
    h("option", { value: "ed25519" }, "Ed25519 (v1a): you hold only a public key"),
  );
  const ordering = h(
    "select",
    { id: "new-endpoint-ordering" },
    h("option", { value: "concurrent" }, "Concurrent: up to six at once, in no order"),
    h("option", { value: "fifo" }, "FIFO: one at a time, in event order"),
  );
  const form = h(
    "form",
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        try {
          const created = await call<CreatedWebhookEndpoint>("POST", "/webhook-endpoints", {
            body: { url: url.value, types: types.value(), signing: signing.value, ordering: ordering.value },
          });
          show(
            status,
            notice(`Added ${created.url}.`),
            created.secret === undefined
              ? shownOnce("Its public key, to verify deliveries with (v1a)", created.publicKey ?? "")
              : shownOnce("Its signing secret", created.secret),
            h("p", {}, h("a", { href: `#/webhooks/${created.id}` }, "Open the endpoint")),
          );
          url.value = "";
          await load();
        } catch (error) {
          show(status, notice(messageOf(error), "error"));
        }
      },
    },
    h("h2", {}, "Add an endpoint"),
    h("label", { for: "new-endpoint-url" }, "URL"),
    url,
    types.fieldset,
    h("label", { for: "new-endpoint-ordering" }, "Ordering"),
    ordering,
    h("label", { for: "new-endpoint-signing" }, "Signing"),
    signing,
    h("button", { type: "submit" }, "Add endpoint"),
  );
  show(root, h("h1", { tabindex: -1 }, "Webhooks"), status, list, form);
  void load();
}

function endpointView(root: HTMLElement, id: string): () => void {
  const target = { endpoint: id };
  const status = h("div", {});
  const facts = h("div", {});
  const actions = h("div", {});
  const log = h("div", {});
  let drawnStatus: string | undefined;
  const act = async (work: () => Promise<void>) => {
    try {
      await work();
    } catch (error) {
      show(status, notice(messageOf(error), "error"));
    }
  };

  const load = async () => {
    let endpoint: WebhookEndpoint;
    try {
      endpoint = await call<WebhookEndpoint>("GET", apiPath("webhook-endpoints", target));
    } catch (error) {
      show(facts, notice(messageOf(error), "error"));
      return;
    }
    show(
      facts,
      endpoint.status === "enabled" && endpoint.failingSince ? failingBanner(endpoint) : null,
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, "URL"),
        h("dd", {}, endpoint.url),
        h("dt", {}, "Event types"),
        h("dd", {}, endpoint.types.join(", ")),
        h("dt", {}, "Status"),
        h(
          "dd",
          { id: "endpoint-status" },
          endpoint.status,
          endpoint.disabledBy ? ` by ${endpoint.disabledBy}: ${endpoint.disabledReason ?? ""}` : "",
        ),
        h("dt", {}, "Ordering"),
        h(
          "dd",
          { id: "endpoint-ordering" },
          endpoint.ordering === "fifo" ? "FIFO: one at a time, in event order" : "Concurrent: up to six at once",
        ),
        h("dt", {}, "Signing"),
        h(
          "dd",
          { id: "endpoint-signing" },
          endpoint.signing === "ed25519" ? `Ed25519 (v1a), public key ${endpoint.publicKey}` : "HMAC secret (v1)",
        ),
        h("dt", {}, "Created"),
        h("dd", {}, when(endpoint.createdAt)),
      ),
    );
    // The forms are drawn again only when what they offer changes (enable or disable), never under someone's typing.
    if (endpoint.status !== drawnStatus) drawActions(endpoint);
    drawnStatus = endpoint.status;
    await loadLog();
  };

  /** An endpoint a leaked key made or aimed is enabled again only with its URL typed (docs/api.md#what-a-leak-ends). */
  const confirmedEnable = (leakedKey: string) => {
    const url = h("input", {
      id: "confirm-url",
      type: "url",
      required: true,
      autocomplete: "off",
      spellcheck: "false",
    });
    return h(
      "form",
      {
        id: "confirm-url-form",
        onsubmit: (event: Event) => {
          event.preventDefault();
          act(async () => {
            await call("PATCH", apiPath("webhook-endpoints", target), {
              body: { status: "enabled", confirmUrl: url.value },
            });
            show(
              status,
              notice(
                "Enabled: deliveries resume with the next event. Recover the window since the leak to send what " +
                  "failed.",
              ),
            );
            await load();
          });
        },
      },
      notice(
        `The key ${leakedKey}, which made this endpoint or last changed where it delivers, was revoked as leaked: ` +
          `whoever held it may have pointed it at their own server. Check the URL above is yours, then type it to ` +
          `enable the endpoint again.`,
        "error",
      ),
      h("label", { for: "confirm-url" }, "The endpoint's URL, to confirm"),
      url,
      h("button", { type: "submit" }, "Enable"),
    );
  };

  const drawActions = (endpoint: WebhookEndpoint) => {
    const enabled = endpoint.status === "enabled";
    const toggle = endpoint.disabledForLeakedKey
      ? confirmedEnable(endpoint.disabledForLeakedKey)
      : h(
          "button",
          {
            type: "button",
            onclick: () =>
              act(async () => {
                await call("PATCH", apiPath("webhook-endpoints", target), {
                  body: { status: enabled ? "disabled" : "enabled" },
                });
                show(
                  status,
                  notice(
                    enabled
                      ? "Disabled: nothing is delivered until you enable it."
                      : "Enabled: deliveries resume with the next event.",
                  ),
                );
                await load();
              }),
          },
          enabled ? "Disable" : "Enable",
        );
    const test = h(
      "button",
      {
        type: "button",
        onclick: () =>
          act(async () => {
            const result = await call<WebhookTestResult>("POST", apiPath("webhook-endpoints", target, "test"));
            show(
              status,
              notice(
                result.delivered
                  ? `Test event ${result.id} delivered: ${result.status} in ${result.durationMs} ms.`
                  : `Test event ${result.id} not delivered: ${result.status ?? result.error ?? "no answer"} after ` +
                      `${result.durationMs} ms.`,
                result.delivered ? "ok" : "error",
              ),
            );
          }),
      },
      "Send a test event",
    );
    const overlap = h(
      "select",
      { id: "rotate-overlap" },
      OVERLAPS.map(({ seconds, label }) => h("option", { value: seconds, selected: seconds === 86_400 }, label)),
    );
    const rotate = h(
      "form",
      {
        onsubmit: (event: Event) => {
          event.preventDefault();
          void act(async () => {
            const rotated = await call<RotatedWebhookSecret>(
              "POST",
              apiPath("webhook-endpoints", target, "rotate-secret"),
              { body: { overlapSeconds: Number(overlap.value) } },
            );
            show(
              status,
              rotated.secret === undefined
                ? shownOnce("The new public key, to verify deliveries with (v1a)", rotated.publicKey ?? "")
                : shownOnce("The new signing secret", rotated.secret),
              notice(
                `Until ${new Date(rotated.previousSecretExpiresAt).toLocaleString()} each delivery is signed with ` +
                  `both secrets.`,
              ),
            );
          });
        },
      },
      h("h2", {}, "Rotate the signing secret"),
      h("label", { for: "rotate-overlap" }, "Old secret also signs for"),
      overlap,
      h("button", { type: "submit" }, "Rotate secret"),
    );
    const url = h("input", {
      id: "edit-endpoint-url",
      type: "url",
      required: true,
      value: endpoint.url,
      autocomplete: "off",
    });
    const types = typePicker("edit-endpoint", endpoint.types);
    const edit = h(
      "form",
      {
        onsubmit: (event: Event) => {
          event.preventDefault();
          void act(async () => {
            await call("PATCH", apiPath("webhook-endpoints", target), {
              body: { url: url.value, types: types.value() },
            });
            show(status, notice("Saved."));
            drawnStatus = undefined;
            await load();
          });
        },
      },
      h("h2", {}, "Edit"),
      h("label", { for: "edit-endpoint-url" }, "URL"),
      url,
      types.fieldset,
      h("button", { type: "submit" }, "Save"),
    );
    const since = h("input", { id: "recover-since", type: "datetime-local", required: true, step: 1 });
    const recover = h(
      "form",
      {
        onsubmit: (event: Event) => {
          event.preventDefault();
          void act(async () => {
            const result = await call<{ recovered: number; more: boolean }>(
              "POST",
              apiPath("webhook-endpoints", target, "recover"),
              { body: { since: new Date(since.value).toISOString() } },
            );
            show(
              status,
              notice(
                `${result.recovered} failed deliveries sent again${result.more ? "; more remain: recover again" : ""}.`,
              ),
            );
            await loadLog();
          });
        },
      },
      h("h2", {}, "Retry every failed delivery since a time"),
      h("label", { for: "recover-since" }, "Since (your time)"),
      since,
      h("button", { type: "submit" }, "Recover"),
    );
    const remove = h(
      "button",
      {
        type: "button",
        class: "danger",
        onclick: () =>
          act(async () => {
            if (!confirm(`Delete the endpoint ${endpoint.url}? Nothing more is delivered to it.`)) return;
            await call("DELETE", apiPath("webhook-endpoints", target));
            location.hash = "#/webhooks";
          }),
      },
      "Delete endpoint",
    );
    show(actions, h("div", { class: "row" }, test, toggle, remove), edit, rotate, recover);
  };

  const loadLog = async () => {
    try {
      const { data } = await call<{ data: WebhookDelivery[] }>(
        "GET",
        apiPath("webhook-endpoints", target, "deliveries"),
      );
      show(log, h("h2", {}, "Delivery log"), deliveryLog(log, data, retry));
    } catch (error) {
      show(log, notice(messageOf(error), "error"));
    }
  };

  const retry = (delivery: WebhookDelivery) =>
    delivery.outcome === "failed"
      ? h(
          "button",
          {
            type: "button",
            onclick: () =>
              act(async () => {
                await call(
                  "POST",
                  apiPath("webhook-endpoints", target, "deliveries", { delivery: delivery.id }, "retry"),
                );
                show(status, notice(`Delivery of ${delivery.eventId} sent again.`));
                await loadLog();
              }),
          },
          `Retry ${delivery.eventId}`,
        )
      : "";

  show(
    root,
    h("p", {}, h("a", { href: "#/webhooks" }, "← All endpoints")),
    h("h1", { tabindex: -1 }, "Endpoint"),
    status,
    facts,
    actions,
    log,
  );
  void load();
  // The endpoint and its log follow the service: deliveries made and retried, a disabling after failures.
  const timer = setInterval(() => void load(), 5_000);
  return () => clearInterval(timer);
}
