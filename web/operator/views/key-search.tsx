import { useEffect, useRef } from "hono/jsx/dom";
import { messageOf } from "../../kit/api-client";
import { Notice, noSpellcheck, type Said, When, TableHead } from "../../kit/parts";
import { admin } from "../operator-api";
import type { FoundKey, OperatorView } from "../operator-api-types";
import { useLiveState } from "../../kit/live-state";

const FILTERS = [
  { id: "key-plan", name: "plan", label: "Plan", values: ["free", "pro", "business", "enterprise"] },
  {
    id: "key-state",
    name: "state",
    label: "State",
    values: ["live", "expiring", "grace", "banned", "revoked", "expired"],
  },
  {
    id: "key-scope",
    name: "scope",
    label: "Scope",
    values: ["orders:read", "orders:write", "webhooks:manage", "keys:manage"],
  },
];

type Page = { data: FoundKey[]; nextCursor: string | null };

/** Keys of every account (GET /admin/keys), by part of an id, name, start or account, by plan, state and scope. */
function KeySearch() {
  const [found, setFound] = useLiveState<FoundKey[]>([]);
  const [next, setNext] = useLiveState<string | null>(null);
  const [status, setStatus] = useLiveState<Said | "searching">();
  const form = useRef<HTMLFormElement>(null);
  // Only the latest search draws: an earlier one answered late (the first, under a slow service) is dropped.
  const latest = useRef(0);

  const find = async (cursor: string | null) => {
    const turn = ++latest.current;
    const query = new URLSearchParams();
    const fields = new FormData(form.current!);
    const q = String(fields.get("q") ?? "").trim();
    if (q) query.set("q", q);
    for (const { id, name } of FILTERS) {
      const value = String(fields.get(id) ?? "");
      if (value) query.set(name, value);
    }
    if (cursor) query.set("cursor", cursor);
    setStatus("searching");
    try {
      const page = await admin<Page>("GET", `/keys?${query}`);
      if (turn !== latest.current) return;
      const shown = cursor ? [...found, ...page.data] : page.data;
      setFound(shown);
      setNext(page.nextCursor);
      setStatus({ text: `${shown.length} found${page.nextCursor ? ", more to look through" : ""}.` });
    } catch (error) {
      if (turn === latest.current) setStatus({ text: messageOf(error), kind: "error" });
    }
  };
  useEffect(() => void find(null), []);

  return (
    <>
      <h1 tabindex={-1}>Keys</h1>
      {/* biome-ignore lint/a11y/useSemanticElements: the search landmark on a form, which older readers know. */}
      <form
        role="search"
        ref={form}
        onSubmit={(event) => {
          event.preventDefault();
          void find(null);
        }}
      >
        <label for="key-search">Find keys</label>
        <input
          id="key-search"
          name="q"
          type="search"
          autocomplete="off"
          placeholder="key_…, so_live_…, a name or an account"
          {...noSpellcheck}
        />
        <div class="controls">
          {FILTERS.map(({ id, label, values }) => (
            <>
              <label for={id}>{label}</label>
              <select id={id} name={id}>
                <option value="">Any</option>
                {values.map((value) => (
                  <option value={value}>{value}</option>
                ))}
              </select>
            </>
          ))}
        </div>
        <button type="submit">Search</button>
      </form>
      <div>
        {status === "searching" ? (
          <p role="status">Searching…</p>
        ) : (
          status && (status.kind === "error" ? <Notice {...status} /> : <p role="status">{status.text}</p>)
        )}
      </div>
      <div id="key-results">
        <table>
          <caption>Keys found; open one for its account</caption>
          <TableHead titles={["Name", "Id", "Plan", "State", "Account", "Made"]} />
          <tbody>
            {found.map((key) => (
              <tr key={key.id}>
                <td>
                  <a href={`#/budget/${key.id}`}>{key.name}</a>
                  <br />
                  <code>{key.start ? `${key.start}…` : key.id}</code>
                </td>
                <td>
                  <code>{key.id}</code>
                </td>
                <td>{key.plan}</td>
                <td>
                  {key.state}
                  {key.bannedUntil && (
                    <>
                      {" until "}
                      <When iso={key.bannedUntil} />
                    </>
                  )}
                </td>
                <td>
                  <code>{key.budget}</code>
                </td>
                <td>
                  <When iso={key.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      </div>
      <div>
        {next && (
          <button type="button" class="quiet" onClick={() => void find(next)}>
            Look further
          </button>
        )}
      </div>
    </>
  );
}

export const KeySearchView: OperatorView = () => <KeySearch />;
