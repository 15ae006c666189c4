/**
 * The consoles' shared pieces as hono/jsx/dom components: every value reaches the DOM as text, never parsed as HTML,
 * so nothing the API answers can inject into the page.
 */
import { useRef } from "hono/jsx/dom";
import { useLiveState } from "./live-state";

/** `spellcheck="false"`, which a boolean `false` would remove instead: no secret goes to a spelling service. */
export const noSpellcheck = { spellcheck: "false" } as object;

/** An instant as the reader's locale writes it, with the exact value on hover. */
export const When = ({ iso }: { iso: string | null | undefined }) =>
  iso ? (
    <time datetime={iso} title={iso}>
      {new Date(iso).toLocaleString()}
    </time>
  ) : (
    <>—</>
  );

/** What a status line says, and how. */
export type Said = { text: string; kind?: "ok" | "error" };

/** A status line that screen readers announce. */
export const Notice = ({ text, kind = "ok" }: { text: string; kind?: "ok" | "error" }) => (
  <p class={`notice ${kind}`} role={kind === "error" ? "alert" : "status"}>
    {text}
  </p>
);

/** A secret or key shown this once: readable, selectable, with a copy button and a reminder. */
export function ShownOnce({ label, value }: { label: string; value: string }) {
  const [id] = useLiveState(() => `once-${Math.random().toString(36).slice(2)}`);
  const [copied, setCopied] = useLiveState("");
  const field = useRef<HTMLInputElement>(null);
  const copy = async () => {
    field.current?.select();
    try {
      await navigator.clipboard.writeText(value);
      setCopied("Copied.");
    } catch {
      setCopied("Selected: copy it with your keyboard.");
    }
  };
  return (
    <div class="once">
      <label for={id}>{label}</label>
      <div class="row">
        <input
          id={id}
          ref={field}
          type="text"
          readonly
          value={value}
          class="secret"
          autocomplete="off"
          {...noSpellcheck}
        />
        <button type="button" onClick={copy}>
          Copy
        </button>
        <span role="status" class="copied">
          {copied}
        </span>
      </div>
      <p class="hint">Shown this once: store it now. It cannot be shown again.</p>
    </div>
  );
}

/** A table's head: one column heading a title. */
export const TableHead = ({ titles }: { titles: readonly string[] }) => (
  <thead>
    <tr>
      {titles.map((title) => (
        <th scope="col">{title}</th>
      ))}
    </tr>
  </thead>
);
