import { apiPath, isId, messageOf } from "../../kit/api-client";
import { h, notice, show, shownOnce, when } from "../../kit/dom";
import { UsageChart } from "../../kit/usage-chart";
import { mountView } from "../../kit/parts";
import type { UsageHistory } from "../../kit/api-types";
import { acting, admin } from "../operator-api";
import type { AccountPage, AccountUsage, OperatorEndpoint, OperatorView } from "../operator-api-types";

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

/**
 * An account's page, opened from one of its keys: its keys, what its limiter
 * counts now (a ban with its Unban), its limits (edit), its usage chart (the
 * callers' console's, reused), its webhook endpoints, a callers' console
 * link to hand out, and its audit timeline, who did what.
 */
export const accountView: OperatorView = (root, [keyId]) => {
  if (!keyId)
    return void show(
      root,
      h("h1", { tabindex: -1 }, "Account"),
      notice("Open an account from a key found in Keys.", "error"),
    );
  // A part of the address is whoever sent the link's to write: nothing is drawn, nor sent, for what is not a key id.
  if (!isId("key", keyId))
    return void show(
      root,
      h("h1", { tabindex: -1 }, "Account"),
      notice(
        `${JSON.stringify(keyId.slice(0, 40))} is not a key id: open an account from a key found in Keys.`,
        "error",
      ),
    );
  const key = { key: keyId };
  const status = h("div", {});
  const standing = h("div", { id: "account-standing" });
  const keys = h("div", {});
  const limits = h("div", {});
  const endpoints = h("div", {});
  const link = h("div", {});
  const timeline = h("div", { id: "account-timeline" });
  const chart = h("div", {});
  const stopChart = mountView(
    chart,
    <UsageChart
      load={(query, signal) =>
        admin<UsageHistory>("GET", `${apiPath("keys", key, "usage", "history")}?${query}`, { signal })
      }
    />,
  );

  const act = acting(status, () => load());

  const load = async () => {
    let account: AccountPage;
    let usage: AccountUsage;
    let accountEndpoints: OperatorEndpoint[];
    try {
      [account, usage] = await Promise.all([
        admin<AccountPage>("GET", apiPath("keys", key, "budget")),
        admin<AccountUsage>("GET", apiPath("keys", key, "usage")),
      ]);
      accountEndpoints = (
        await admin<{ data: OperatorEndpoint[] }>(
          "GET",
          `/webhook-endpoints?budget=${encodeURIComponent(account.budget)}`,
        )
      ).data;
    } catch (error) {
      return void show(status, notice(messageOf(error), "error"));
    }
    const banned = usage.usage.bannedUntil * 1000 > Date.now();
    show(
      standing,
      h(
        "dl",
        { class: "facts" },
        h("dt", {}, "Account"),
        h("dd", {}, h("code", {}, account.budget)),
        h("dt", {}, "This minute"),
        h("dd", {}, `${usage.usage.minute.count} admitted, until ${iso(usage.usage.minute.reset)}`),
        h("dt", {}, "Today"),
        h("dd", {}, `${usage.usage.day.count} admitted, until ${iso(usage.usage.day.reset)}`),
        h("dt", {}, "Refused in a row"),
        h("dd", {}, usage.usage.refusedInARow),
        h("dt", {}, "Ban"),
        h("dd", { id: "account-ban" }, banned ? `banned until ${iso(usage.usage.bannedUntil)}` : "none"),
      ),
      // Offered unbanned too: it starts the refusal streak over, so an account about to be banned is not.
      h(
        "button",
        {
          type: "button",
          class: banned ? "danger" : "quiet",
          onclick: () =>
            void act(
              () => admin("POST", apiPath("keys", key, "unban")),
              "Unbanned, its refusal streak started over: every location admits it again within 5 seconds.",
            ),
        },
        "Unban",
      ),
    );
    show(
      keys,
      h(
        "table",
        {},
        h("caption", {}, "The account's keys"),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["Name", "Id", "Plan", "State", "Scopes", "Expires"].map((title) => h("th", { scope: "col" }, title)),
          ),
        ),
        h(
          "tbody",
          {},
          account.keys.map((key) =>
            h(
              "tr",
              {},
              h("td", {}, key.name),
              h("td", {}, h("code", {}, key.id)),
              h("td", {}, key.plan),
              h(
                "td",
                {},
                key.state,
                key.revokedReason === "leaked" ? " (leaked)" : "",
                key.madeByLeakedKey
                  ? h(
                      "strong",
                      { class: "warning" },
                      ` made by the leaked key ${key.madeByLeakedKey}: have its owner rotate it`,
                    )
                  : "",
              ),
              h("td", {}, key.scopes.join(", ")),
              h("td", {}, when(key.expiresAt)),
            ),
          ),
        ),
      ),
      ...account.keys.flatMap((key) =>
        key.leak
          ? [
              notice(
                `${key.id} was revoked as leaked at ${key.leak.leakedAt}` +
                  `${key.leak.foundAt ? `, found at ${key.leak.foundAt}` : ""}; ` +
                  `endpoints disabled: ${key.leak.endpointsDisabled.join(", ") || "none"}; ` +
                  `keys it made by rotation: ${key.leak.rotatedInto.join(", ") || "none"}.`,
                "error",
              ),
            ]
          : [],
      ),
    );
    const own = account.keys.some((key) => key.limits);
    const perMinute = h("input", {
      id: "limit-minute",
      name: "perMinute",
      type: "number",
      min: 1,
      step: 1,
      required: true,
      value: account.limitsInForce.perMinute,
    });
    const perDay = h("input", {
      id: "limit-day",
      name: "perDay",
      type: "number",
      min: 1,
      step: 1,
      required: true,
      value: account.limitsInForce.perDay,
    });
    show(
      limits,
      h(
        "form",
        {
          onsubmit: (event: Event) => {
            event.preventDefault();
            void act(
              () =>
                admin("POST", apiPath("keys", key, "limits"), {
                  body: { perMinute: Number(perMinute.value), perDay: Number(perDay.value) },
                }),
              "Limits set: every location counts by them from its next call.",
            );
          },
        },
        h(
          "div",
          { class: "controls" },
          h("label", { for: "limit-minute" }, "Per minute"),
          perMinute,
          h("label", { for: "limit-day" }, "Per day"),
          perDay,
        ),
        h(
          "p",
          { class: "hint" },
          own
            ? "The limits in force: the account's own, kept in its keys' records until changed."
            : "The limits in force: its plan's. Set, they are kept in its keys' records until changed.",
        ),
        h("button", { type: "submit" }, "Set limits"),
      ),
    );
    show(
      endpoints,
      accountEndpoints.length === 0
        ? h("p", {}, "No webhook endpoints.")
        : h(
            "table",
            {},
            h("caption", {}, "The account's webhook endpoints"),
            h(
              "thead",
              {},
              h(
                "tr",
                {},
                ["URL", "Status"].map((title) => h("th", { scope: "col" }, title)),
              ),
            ),
            h(
              "tbody",
              {},
              accountEndpoints.map((endpoint) =>
                h(
                  "tr",
                  {},
                  h("td", {}, h("code", {}, endpoint.url)),
                  h(
                    "td",
                    {},
                    endpoint.status === "disabled" ? `disabled: ${endpoint.disabledReason ?? ""}` : "enabled",
                  ),
                ),
              ),
            ),
          ),
    );
    show(
      timeline,
      h(
        "table",
        {},
        h("caption", {}, "Newest first: every key operation, console sign-in and endpoint action, with who did it"),
        h(
          "thead",
          {},
          h(
            "tr",
            {},
            ["When", "What", "On", "Who", "Details"].map((title) => h("th", { scope: "col" }, title)),
          ),
        ),
        h(
          "tbody",
          {},
          account.timeline.map((row) =>
            h(
              "tr",
              {},
              h("td", {}, when(row.at)),
              h("td", {}, row.operation, row.outcome ? ` (${row.outcome})` : ""),
              h("td", {}, h("code", {}, row.subject)),
              h("td", {}, row.actor),
              h("td", {}, h("code", {}, JSON.stringify(row.changes))),
            ),
          ),
        ),
      ),
    );
  };

  show(
    link,
    h(
      "button",
      {
        type: "button",
        class: "quiet",
        onclick: async () => {
          try {
            const made = await admin<{ url: string; expiresAt: string }>("POST", apiPath("keys", key, "console-link"));
            show(
              link,
              shownOnce(
                `A callers' console sign-in link for ${keyId}, until ${made.expiresAt}: hand it to the key's holder`,
                made.url,
              ),
            );
          } catch (error) {
            show(status, notice(messageOf(error), "error"));
          }
        },
      },
      "Make a callers' console link",
    ),
  );

  show(
    root,
    h("h1", { tabindex: -1 }, `Account of ${keyId}`),
    status,
    standing,
    h("h2", {}, "Keys"),
    keys,
    h("h2", {}, "Limits"),
    limits,
    h("h2", {}, "Usage"),
    chart,
    h("h2", {}, "Webhook endpoints"),
    endpoints,
    h("h2", {}, "Callers' console"),
    link,
    h("h2", {}, "Audit timeline"),
    timeline,
  );
  void load();
  return stopChart;
};
