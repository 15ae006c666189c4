/**
 * Building the page without markup strings: every value reaches the DOM as
 * text (never parsed as HTML), so nothing the API answers can inject into it.
 */
export type Child = Node | string | number | null | undefined | false;
type Attributes = Record<string, string | number | boolean | EventListener | undefined>;

export function h<K extends keyof HTMLElementTagNameMap>(
  tag: K,
  attributes: Attributes = {},
  ...children: (Child | Child[])[]
): HTMLElementTagNameMap[K] {
  const element = document.createElement(tag);
  for (const [name, value] of Object.entries(attributes)) {
    if (value === undefined || value === false) continue;
    if (typeof value === "function") element.addEventListener(name.slice(2).toLowerCase(), value);
    else if (value === true) element.setAttribute(name, "");
    else element.setAttribute(name, String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    element.append(child instanceof Node ? child : String(child));
  }
  return element;
}

/** Replaces what an element shows. */
export function show(parent: Element, ...children: (Child | Child[])[]): void {
  parent.replaceChildren(
    ...children
      .flat()
      .filter((child): child is Node | string | number => child !== null && child !== undefined && child !== false)
      .map((child) => (child instanceof Node ? child : String(child))),
  );
}

/** An instant as the reader's locale writes it, with the exact value on hover. */
export function when(iso: string | null | undefined): HTMLElement | string {
  if (!iso) return "—";
  return h("time", { datetime: iso, title: iso }, new Date(iso).toLocaleString());
}

/** A status line that screen readers announce. */
export function notice(text: string, kind: "ok" | "error" = "ok"): HTMLElement {
  return h("p", { class: `notice ${kind}`, role: kind === "error" ? "alert" : "status" }, text);
}

/**
 * A secret or key shown this once: readable, selectable, with a copy
 * button, and a reminder that it will not be shown again.
 */
export function shownOnce(label: string, value: string): HTMLElement {
  const id = `once-${Math.random().toString(36).slice(2)}`;
  const field = h("input", {
    id,
    type: "text",
    readonly: true,
    value,
    class: "secret",
    spellcheck: "false",
    autocomplete: "off",
  });
  const copied = h("span", { role: "status", class: "copied" });
  const copy = h(
    "button",
    {
      type: "button",
      onclick: async () => {
        field.select();
        try {
          await navigator.clipboard.writeText(value);
          copied.textContent = "Copied.";
        } catch {
          copied.textContent = "Selected: copy it with your keyboard.";
        }
      },
    },
    "Copy",
  );
  return h(
    "div",
    { class: "once" },
    h("label", { for: id }, label),
    h("div", { class: "row" }, field, copy, copied),
    h("p", { class: "hint" }, "Shown this once: store it now. It cannot be shown again."),
  );
}
