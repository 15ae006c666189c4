import { apiPath, call, messageOf } from "../../kit/api-client";
import { h, notice, show, shownOnce, when } from "../../kit/dom";
import type { OwnKey, RotatedKey } from "../../kit/api-types";
import type { View } from "../console-view";

const GRACES = [
  { seconds: 3_600, label: "1 hour" },
  { seconds: 86_400, label: "1 day" },
  { seconds: 604_800, label: "7 days" },
  { seconds: 0, label: "None: the old key stops now" },
];

const stateOf = (key: OwnKey) =>
  key.revokedAt
    ? key.revokedReason === "leaked"
      ? "revoked as leaked"
      : "revoked"
    : !key.usable
      ? "expired"
      : key.expiresAt
        ? "expiring"
        : "active";

/**
 * What a leaked key's revocation ended, and the keys it made that its holder may still hold
 * (docs/api.md#what-a-leak-ends).
 */
const leakNotices = (keys: OwnKey[]) =>
  keys.flatMap((key) => {
    const leak = key.leak;
    if (!leak) return [];
    const found = leak.foundAt ? ` It was found at ${leak.foundAt}${leak.source ? ` (${leak.source})` : ""}.` : "";
    const endpoints =
      leak.endpointsDisabled.length > 0
        ? ` The webhook endpoints it made or aimed were disabled: ${leak.endpointsDisabled.join(", ")}.`
        : "";
    const made =
      leak.rotatedInto.length > 0
        ? ` It made ${leak.rotatedInto.join(", ")} by rotation: whoever held it may hold them too. Rotate them.`
        : "";
    return [
      h(
        "div",
        { class: "leak", "data-leaked-key": key.id },
        notice(
          `${key.start ?? key.id} was revoked as leaked at ` +
            `${new Date(leak.leakedAt).toLocaleString()}.${found}${endpoints}${made}`,
          "error",
        ),
      ),
    ];
  });

/**
 * The account's keys: rotate the signed-in key with a grace period (the new
 * key shown once; the session moves to it), see both while both live, revoke
 * the old one early. Needs the keys:manage scope, and says so without it.
 */
export const keysView: View = (root, session, _route, page) => {
  if (!session.key.scopes.includes("keys:manage")) {
    show(
      root,
      h("h1", { tabindex: -1 }, "Keys"),
      notice(
        `This key cannot rotate or revoke keys: it lacks the keys:manage scope (it has ` +
          `${session.key.scopes.join(", ")}). Ask your operator for a key with it, or for a rotation.`,
        "error",
      ),
    );
    return;
  }
  const list = h("div", {});
  const status = h("div", {});
  const shown = h("div", {});

  const load = async () => {
    try {
      const { data } = await call<{ data: OwnKey[] }>("GET", "/keys");
      // A key rotated away, or one that expires, acts only on itself (docs/api.md#your-own-keys): no actions on the
      // others.
      const expiring = data.find((key) => key.current)?.expiresAt ?? null;
      show(
        list,
        expiring
          ? notice(
              `The signed-in key stops working at ${new Date(expiring).toLocaleString()}: it can act only on itself. ` +
                `Sign in with the key that replaced it to manage the others.`,
            )
          : null,
        ...leakNotices(data),
        h(
          "table",
          { id: "keys-table" },
          h("caption", {}, "This account's keys, newest first"),
          h(
            "thead",
            {},
            h(
              "tr",
              {},
              ["Key", "Name", "Created", "Stops working", "State", ""].map((title) => h("th", { scope: "col" }, title)),
            ),
          ),
          h(
            "tbody",
            {},
            data.map((key) =>
              h(
                "tr",
                { "data-key-id": key.id },
                h("td", {}, h("code", {}, key.start ? `${key.start}…` : key.id), key.current ? " (signed in)" : ""),
                h("td", {}, key.name),
                h("td", {}, when(key.createdAt)),
                h("td", {}, key.expiresAt ? when(key.expiresAt) : "never"),
                h(
                  "td",
                  {},
                  stateOf(key),
                  key.madeByLeakedKey
                    ? h("strong", { class: "warning" }, ` (made by the leaked key ${key.madeByLeakedKey}: rotate it)`)
                    : "",
                ),
                h(
                  "td",
                  {},
                  key.usable && !key.current && !expiring
                    ? [
                        h(
                          "button",
                          { type: "button", class: "danger", onclick: () => revoke(key, "retired") },
                          `Revoke ${key.start ?? key.id} now`,
                        ),
                        h(
                          "button",
                          { type: "button", class: "danger", onclick: () => revoke(key, "leaked") },
                          "Revoke as leaked",
                        ),
                      ]
                    : "",
                ),
              ),
            ),
          ),
        ),
      );
    } catch (error) {
      show(list, notice(messageOf(error), "error"));
    }
  };

  const revoke = async (key: OwnKey, reason: "retired" | "leaked") => {
    const ends =
      reason === "leaked" ? " The webhook endpoints it made or aimed are disabled, and its console sessions end." : "";
    if (
      !confirm(
        `Revoke ${key.start ?? key.id}${reason === "leaked" ? " as leaked" : ""}? Every request with it is refused ` +
          `from now on, for good.${ends}`,
      )
    )
      return;
    try {
      await call("POST", apiPath("keys", { key: key.id }, "revoke"), { body: { reason } });
      show(status, notice(`Revoked ${key.start ?? key.id}${reason === "leaked" ? " as leaked" : ""}.`));
      await load();
    } catch (error) {
      show(status, notice(messageOf(error), "error"));
    }
  };

  const grace = h(
    "select",
    { id: "rotate-grace" },
    GRACES.map(({ seconds, label }) => h("option", { value: seconds, selected: seconds === 86_400 }, label)),
  );
  const rotate = h(
    "form",
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        let rotated: RotatedKey;
        try {
          rotated = await call<RotatedKey>("POST", apiPath("keys", { key: session.key.id }, "rotate"), {
            body: { graceSeconds: Number(grace.value) },
          });
        } catch (error) {
          return void show(status, notice(messageOf(error), "error"));
        }
        // The key first: whatever happens next, it is on the page to be kept.
        show(
          shown,
          shownOnce("Your new key", rotated.key),
          notice(
            `The old key ${rotated.previous.id} works until ${new Date(rotated.previous.expiresAt).toLocaleString()}.`,
          ),
        );
        show(status);
        try {
          // The session moves to the new key (the old session ends), so it outlives the old one.
          await call("POST", "/console/session", { key: rotated.key });
          await page.refreshSession();
          shown.append(notice("This console now uses the new key."));
        } catch (error) {
          shown.append(
            notice(
              `This console still uses the old key: ${messageOf(error)} Sign in with the new key before the old one ` +
                `stops.`,
              "error",
            ),
          );
        }
        await load();
      },
    },
    h("h2", {}, "Rotate this key"),
    h(
      "p",
      {},
      "A new key for the same account, plan, limits, scopes and webhooks. The key you signed in with keeps " +
        "working for " +
        "the grace period, so your clients can move over.",
    ),
    h("label", { for: "rotate-grace" }, "Grace period"),
    grace,
    h("button", { type: "submit" }, "Rotate"),
  );
  show(root, h("h1", { tabindex: -1 }, "Keys"), status, shown, list, rotate);
  void load();
};
