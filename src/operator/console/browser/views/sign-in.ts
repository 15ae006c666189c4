import { messageOf } from "../../../../console/browser/api";
import { h, notice } from "../../../../console/browser/dom";
import { admin } from "../api";

/** Signing in with an operator's token: sent once, in a header, exchanged for the session cookie; never kept by the page. */
export function signInView(message: string | undefined, signedIn: () => Promise<void>): HTMLElement {
  const status = h("div", {});
  const field = h("input", { id: "operator-token", name: "operator-token", type: "password", autocomplete: "off", required: true, spellcheck: "false", "aria-describedby": "operator-token-hint" });
  const form = h(
    "form",
    {
      onsubmit: async (event: Event) => {
        event.preventDefault();
        const key = field.value.trim();
        field.value = "";
        try {
          await admin("POST", "/session", { key });
          await signedIn();
        } catch (error) {
          status.replaceChildren(notice(messageOf(error), "error"));
          field.focus();
        }
      },
    },
    h("label", { for: "operator-token" }, "Operator token"),
    h("p", { id: "operator-token-hint", class: "hint" }, "Yours from npm run keys -- operator add, or the deployment's OPERATOR_TOKEN. It is exchanged for a 12-hour session and not kept by this page."),
    field,
    h("button", { type: "submit" }, "Sign in"),
  );
  return h(
    "div",
    { class: "sign-in" },
    h("h1", { tabindex: -1 }, "Sign in to the Store Orders operators' console"),
    message ? notice(message, /signed out/i.test(message) ? "ok" : "error") : null,
    form,
    status,
    h("p", { class: "hint" }, "Or open a sign-in link from npm run keys -- operator-link <your name>."),
  );
}
