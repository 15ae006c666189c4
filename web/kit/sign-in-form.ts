import { messageOf } from "./api-client";
import { h, notice } from "./dom";

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
