import { call, messageOf } from "../api";
import { h, notice } from "../dom";

/**
 * Either shape of key (docs/api.md#key-format): the page imports nothing of the worker's, so a test holds this to the
 * worker's own.
 */
const KEY_PATTERN = "so_(live|test)_[0-9A-Za-z]{32}([0-9A-Za-z]{6})?";

export interface SignInForm {
  heading: string;
  /** The field: its id, its label, what it looks like. */
  field: { id: string; label: string; hint: string; pattern?: string };
  /** Exchanges what was typed for the session cookie. */
  exchange(secret: string): Promise<unknown>;
  footer: string;
}

/**
 * Signing in with a secret (a key, an operator's token): sent once, in a
 * header, exchanged for the session cookie; never kept by the page. Both
 * consoles sign in this way.
 */
export function signInForm(form: SignInForm, message: string | undefined, signedIn: () => Promise<void>): HTMLElement {
  const status = h("div", {});
  const { id, label, hint, pattern } = form.field;
  const field = h("input", {
    id,
    name: id,
    type: "password",
    autocomplete: "off",
    required: true,
    spellcheck: "false",
    pattern,
    "aria-describedby": `${id}-hint`,
  });
  return h(
    "div",
    { class: "sign-in" },
    h("h1", { tabindex: -1 }, form.heading),
    message ? notice(message, /signed out/i.test(message) ? "ok" : "error") : null,
    h(
      "form",
      {
        onsubmit: async (event: Event) => {
          event.preventDefault();
          const secret = field.value.trim();
          field.value = "";
          try {
            await form.exchange(secret);
            await signedIn();
          } catch (error) {
            status.replaceChildren(notice(messageOf(error), "error"));
            field.focus();
          }
        },
      },
      h("label", { for: id }, label),
      h("p", { id: `${id}-hint`, class: "hint" }, hint),
      field,
      h("button", { type: "submit" }, "Sign in"),
    ),
    status,
    h("p", { class: "hint" }, form.footer),
  );
}

/** The callers' console: a key. */
export const signInView = (message: string | undefined, signedIn: () => Promise<void>): HTMLElement =>
  signInForm(
    {
      heading: "Sign in to the Store Orders console",
      field: {
        id: "api-key",
        label: "API key",
        hint:
          "so_live_ or so_test_ and 38 letters and digits (32 for keys made before November 2026). It is " +
          "exchanged for a 12-hour session and not kept by this page.",
        pattern: KEY_PATTERN,
      },
      exchange: (key) => call("POST", "/console/session", { key }),
      footer: "No key? An operator can send you a sign-in link instead.",
    },
    message,
    signedIn,
  );
