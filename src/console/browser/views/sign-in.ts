import { call, messageOf } from "../api";
import { h, notice } from "../dom";

/** Signing in with a key: sent once, in a header, exchanged for the session cookie; never kept by the page. */
export function signInView(message: string | undefined, signedIn: () => Promise<void>): HTMLElement {
  const status = h("div", {});
  const field = h("input", { id: "api-key", name: "api-key", type: "password", autocomplete: "off", required: true, spellcheck: "false", pattern: "so_(live|test)_[0-9A-Za-z]{32}", "aria-describedby": "api-key-hint" });
  const form = h(
    "form",
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const key = field.value.trim();
        field.value = "";
        try {
          await call("POST", "/console/session", { key });
          await signedIn();
        } catch (error) {
          status.replaceChildren(notice(messageOf(error), "error"));
          field.focus();
        }
      },
    },
    h("label", { for: "api-key" }, "API key"),
    h("p", { id: "api-key-hint", class: "hint" }, "so_live_ or so_test_ and 32 letters and digits. It is exchanged for a 12-hour session and not kept by this page."),
    field,
    h("button", { type: "submit" }, "Sign in"),
  );
  return h(
    "div",
    { class: "sign-in" },
    h("h1", { tabindex: -1 }, "Sign in to the Store Orders console"),
    message ? notice(message, /signed out/i.test(message) ? "ok" : "error") : null,
    form,
    status,
    h("p", { class: "hint" }, "No key? An operator can send you a sign-in link instead."),
  );
}
