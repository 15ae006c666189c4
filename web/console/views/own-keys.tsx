import { useEffect, useRef } from "hono/jsx/dom";
import { apiPath, call, messageOf } from "../../kit/api-client";
import type { OwnKey, RotatedKey, Session } from "../../kit/api-types";
import { Notice, type Said, ShownOnce, When, TableHead } from "../../kit/parts";
import type { View } from "../console-view";
import { useLiveState } from "../../kit/live-state";

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

const until = (iso: string) => new Date(iso).toLocaleString();

/** What a leaked key's revocation ended, and the keys it made (docs/api.md#what-a-leak-ends). */
function LeakNotice({ keyOf }: { keyOf: OwnKey }) {
  const leak = keyOf.leak!;
  const found = leak.foundAt ? ` It was found at ${leak.foundAt}${leak.source ? ` (${leak.source})` : ""}.` : "";
  const endpoints =
    leak.endpointsDisabled.length > 0
      ? ` The webhook endpoints it made or aimed were disabled: ${leak.endpointsDisabled.join(", ")}.`
      : "";
  const made =
    leak.rotatedInto.length > 0
      ? ` It made ${leak.rotatedInto.join(", ")} by rotation: whoever held it may hold them too. Rotate them.`
      : "";
  const text =
    `${keyOf.start} was revoked as leaked at ${new Date(leak.leakedAt).toLocaleString()}.` +
    `${found}${endpoints}${made}`;
  return (
    <div class="leak" data-leaked-key={keyOf.id}>
      <Notice text={text} kind="error" />
    </div>
  );
}

/**
 * The account's keys: rotate the signed-in key with a grace period (the new key shown once, the session moved to
 * it), see both while both live, revoke the old one early.
 */
function Keys({ session, refreshSession }: { session: Session; refreshSession: () => Promise<void> }) {
  const [keys, setKeys] = useLiveState<OwnKey[] | Said>();
  const [status, setStatus] = useLiveState<Said>();
  const [rotated, setRotated] = useLiveState<{ key: RotatedKey; moved?: Said }>();
  const grace = useRef<HTMLSelectElement>(null);

  const load = async () => {
    try {
      setKeys((await call<{ data: OwnKey[] }>("GET", "/keys")).data);
    } catch (error) {
      setKeys({ text: messageOf(error), kind: "error" });
    }
  };
  useEffect(() => void load(), []);

  const revoke = async (key: OwnKey, reason: "retired" | "leaked") => {
    const asLeaked = reason === "leaked" ? " as leaked" : "";
    const ends = reason === "leaked" ? " The webhook endpoints it made or aimed are disabled." : "";
    const refused = "Every request with it, and every console session of it, is refused from now on, for good.";
    if (!confirm(`Revoke ${key.start}${asLeaked}? ${refused}${ends}`)) return;
    try {
      await call("POST", apiPath("keys", { key: key.id }, "revoke"), { body: { reason } });
      setStatus({ text: `Revoked ${key.start}${asLeaked}.` });
      await load();
    } catch (error) {
      setStatus({ text: messageOf(error), kind: "error" });
    }
  };

  const rotate = async (event: Event) => {
    event.preventDefault();
    let made: RotatedKey;
    try {
      made = await call<RotatedKey>("POST", apiPath("keys", { key: session.key.id }, "rotate"), {
        body: { graceSeconds: Number(grace.current!.value) },
      });
    } catch (error) {
      return setStatus({ text: messageOf(error), kind: "error" });
    }
    // The key first: whatever happens next, it is on the page to be kept.
    setRotated({ key: made });
    setStatus(undefined);
    try {
      // The session moves to the new key (the old session ends), so it outlives the old one.
      await call("POST", "/console/session", { key: made.key });
      await refreshSession();
      setRotated({ key: made, moved: { text: "This console now uses the new key." } });
    } catch (error) {
      const text =
        `This console still uses the old key: ${messageOf(error)} Sign in with the new key before the old ` +
        "one stops.";
      setRotated({ key: made, moved: { text, kind: "error" } });
    }
    await load();
  };

  // A key rotated away, or one that expires, acts only on itself (docs/api.md#your-own-keys): no actions on others.
  const list = Array.isArray(keys) ? keys : [];
  const expiring = list.find((key) => key.current)?.expiresAt ?? null;
  return (
    <>
      <h1 tabindex={-1}>Keys</h1>
      <div>{status && <Notice {...status} />}</div>
      <div>
        {rotated && (
          <>
            <ShownOnce key={rotated.key.key} label="Your new key" value={rotated.key.key} />
            <Notice
              text={`The old key ${rotated.key.previous.id} works until ${until(rotated.key.previous.expiresAt)}.`}
            />
            {rotated.moved && <Notice {...rotated.moved} />}
          </>
        )}
      </div>
      <div>
        {keys && !Array.isArray(keys) && <Notice {...keys} />}
        {expiring && (
          <Notice
            text={
              `The signed-in key stops working at ${new Date(expiring).toLocaleString()}: it can act only on itself. ` +
              "Sign in with the key that replaced it to manage the others."
            }
          />
        )}
        {list
          .filter((key) => key.leak)
          .map((key) => (
            <LeakNotice keyOf={key} />
          ))}
        {Array.isArray(keys) && (
          <table id="keys-table">
            <caption>This account's keys, newest first</caption>
            <TableHead titles={["Key", "Name", "Created", "Stops working", "State", ""]} />
            <tbody>
              {list.map((key) => (
                <tr key={key.id} data-key-id={key.id}>
                  <td>
                    <code>{`${key.start}…`}</code>
                    {key.current ? " (signed in)" : ""}
                  </td>
                  <td>{key.name}</td>
                  <td>
                    <When iso={key.createdAt} />
                  </td>
                  <td>{key.expiresAt ? <When iso={key.expiresAt} /> : "never"}</td>
                  <td>
                    {stateOf(key)}
                    {key.madeByLeakedKey && (
                      <strong class="warning">{` (made by the leaked key ${key.madeByLeakedKey}: rotate it)`}</strong>
                    )}
                  </td>
                  <td>
                    {key.usable && !key.current && !expiring && (
                      <>
                        <button type="button" class="danger" onClick={() => revoke(key, "retired")}>
                          {`Revoke ${key.start} now`}
                        </button>
                        <button type="button" class="danger" onClick={() => revoke(key, "leaked")}>
                          Revoke as leaked
                        </button>
                      </>
                    )}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        )}
      </div>
      <form onSubmit={rotate}>
        <h2>Rotate this key</h2>
        <p>
          A new key for the same account, plan, limits, scopes and webhooks. The key you signed in with keeps working
          for the grace period, so your clients can move over.
        </p>
        <label for="rotate-grace">Grace period</label>
        <select id="rotate-grace" ref={grace}>
          {GRACES.map(({ seconds, label }) => (
            <option value={String(seconds)} selected={seconds === 86_400}>
              {label}
            </option>
          ))}
        </select>
        <button type="submit">Rotate</button>
      </form>
    </>
  );
}

export const KeysView: View = ({ session, refreshSession }) =>
  session.key.scopes.includes("keys:manage") ? (
    <Keys session={session} refreshSession={refreshSession} />
  ) : (
    <>
      <h1 tabindex={-1}>Keys</h1>
      <Notice
        kind="error"
        text={
          `This key cannot rotate or revoke keys: it lacks the keys:manage scope (it has ` +
          `${session.key.scopes.join(", ")}). Ask your operator for a key with it, or for a rotation.`
        }
      />
    </>
  );
