import { messageOf } from "../../kit/api-client";
import { h, notice, show, when } from "../../kit/dom";
import { admin } from "../operator-api";
import type { FoundKey, OperatorView } from "../operator-api-types";

const PLANS = ["free", "pro", "business", "enterprise"];
const STATES = ["live", "expiring", "grace", "banned", "revoked", "expired"];
const SCOPES = ["orders:read", "orders:write", "webhooks:manage", "keys:manage"];

const select = (id: string, label: string, values: string[]) => [
  h("label", { for: id }, label),
  h(
    "select",
    { id, name: id },
    h("option", { value: "" }, "Any"),
    values.map((value) => h("option", { value }, value)),
  ),
];

/**
 * Keys of every account (GET /admin/keys): by part of an id, name, first characters or account; by plan, state
 * and scope;
 * paged.
 */
export const keysView: OperatorView = (root) => {
  const results = h("div", { id: "key-results" });
  const status = h("div", {});
  const more = h("div", {});
  const search = h("input", {
    id: "key-search",
    name: "q",
    type: "search",
    autocomplete: "off",
    spellcheck: "false",
    placeholder: "key_…, so_live_…, a name or an account",
  });
  const form = h(
    "form",
    {
      role: "search",
      onsubmit: (event: Event) => {
        event.preventDefault();
        void find(undefined);
      },
    },
    h("label", { for: "key-search" }, "Find keys"),
    search,
    h(
      "div",
      { class: "controls" },
      select("key-plan", "Plan", PLANS),
      select("key-state", "State", STATES),
      select("key-scope", "Scope", SCOPES),
    ),
    h("button", { type: "submit" }, "Search"),
  );
  const rows = h("tbody", {});

  // Only the latest search draws: an earlier one answered late (the view's first, under a slow service) is dropped.
  let latest = 0;
  const find = async (cursor: string | undefined) => {
    const turn = ++latest;
    const query = new URLSearchParams();
    if (search.value.trim()) query.set("q", search.value.trim());
    for (const [field, name] of [
      ["key-plan", "plan"],
      ["key-state", "state"],
      ["key-scope", "scope"],
    ] as const) {
      const value = (root.querySelector(`#${field}`) as HTMLSelectElement).value;
      if (value) query.set(name, value);
    }
    if (cursor) query.set("cursor", cursor);
    show(status, h("p", { role: "status" }, "Searching…"));
    try {
      const page = await admin<{ data: FoundKey[]; nextCursor: string | null }>("GET", `/keys?${query}`);
      if (turn !== latest) return;
      if (!cursor) rows.replaceChildren();
      rows.append(
        ...page.data.map((key) =>
          h(
            "tr",
            {},
            h(
              "td",
              {},
              h("a", { href: `#/budget/${key.id}` }, key.name),
              h("br"),
              h("code", {}, key.start ? `${key.start}…` : key.id),
            ),
            h("td", {}, h("code", {}, key.id)),
            h("td", {}, key.plan),
            h("td", {}, key.state, key.bannedUntil ? [" until ", when(key.bannedUntil)] : ""),
            h("td", {}, h("code", {}, key.budget)),
            h("td", {}, when(key.createdAt)),
          ),
        ),
      );
      show(
        status,
        h("p", { role: "status" }, `${rows.children.length} found${page.nextCursor ? ", more to look through" : ""}.`),
      );
      show(
        more,
        page.nextCursor
          ? h("button", { type: "button", class: "quiet", onclick: () => void find(page.nextCursor!) }, "Look further")
          : null,
      );
    } catch (error) {
      if (turn === latest) show(status, notice(messageOf(error), "error"));
    }
  };

  show(
    results,
    h(
      "table",
      {},
      h("caption", {}, "Keys found; open one for its account"),
      h(
        "thead",
        {},
        h(
          "tr",
          {},
          ["Name", "Id", "Plan", "State", "Account", "Made"].map((title) => h("th", { scope: "col" }, title)),
        ),
      ),
      rows,
    ),
  );
  show(root, h("h1", { tabindex: -1 }, "Keys"), form, status, results, more);
  void find(undefined);
};
