import { useEffect } from "hono/jsx/dom";
import { apiPath, isId, messageOf } from "../../kit/api-client";
import type { UsageHistory } from "../../kit/api-types";
import { Notice, ShownOnce, When, TableHead } from "../../kit/parts";
import { UsageChart } from "../../kit/usage-chart";
import { admin, useActing } from "../operator-api";
import type { AccountPage, AccountUsage, OperatorEndpoint, OperatorView } from "../operator-api-types";
import { useLiveState } from "../../kit/live-state";

const iso = (unixSeconds: number) => new Date(unixSeconds * 1000).toISOString();

type Act = ReturnType<typeof useActing>["act"];
type Read = { account: AccountPage; usage: AccountUsage; endpoints: OperatorEndpoint[] };

/**
 * An account's page, opened from one of its keys: its keys, what its limiter counts now (a ban with its Unban), its
 * limits (edit), its usage chart, its webhook endpoints, a callers' console link to hand out, and its audit
 * timeline, who did what.
 */
function Account({ keyId }: { keyId: string }) {
  const key = { key: keyId };
  const [read, setRead] = useLiveState<Read>();
  const load = async () => {
    try {
      const [account, usage] = await Promise.all([
        admin<AccountPage>("GET", apiPath("keys", key, "budget")),
        admin<AccountUsage>("GET", apiPath("keys", key, "usage")),
      ]);
      const path = `/webhook-endpoints?budget=${encodeURIComponent(account.budget)}`;
      const endpoints = (await admin<{ data: OperatorEndpoint[] }>("GET", path)).data;
      setRead({ account, usage, endpoints });
    } catch (error) {
      setStatus({ text: messageOf(error), kind: "error" });
    }
  };
  const { status, setStatus, act } = useActing(load);
  useEffect(() => void load(), []);
  const history = (query: string, signal: AbortSignal) =>
    admin<UsageHistory>("GET", `${apiPath("keys", key, "usage", "history")}?${query}`, { signal });

  return (
    <>
      <h1 tabindex={-1}>{`Account of ${keyId}`}</h1>
      <div>{status && <Notice {...status} />}</div>
      <div id="account-standing">{read && <Standing read={read} act={act} keyId={keyId} />}</div>
      <h2>Keys</h2>
      <div>{read && <Keys account={read.account} />}</div>
      <h2>Limits</h2>
      <div>{read && <Limits account={read.account} act={act} keyId={keyId} />}</div>
      <h2>Usage</h2>
      <UsageChart load={history} />
      <h2>Webhook endpoints</h2>
      <div>{read && <Endpoints endpoints={read.endpoints} />}</div>
      <h2>Callers' console</h2>
      <ConsoleLink keyId={keyId} failed={(text) => setStatus({ text, kind: "error" })} />
      <h2>Audit timeline</h2>
      <div id="account-timeline">{read && <Timeline account={read.account} />}</div>
    </>
  );
}

function Standing({ read, act, keyId }: { read: Read; act: Act; keyId: string }) {
  const { usage } = read.usage;
  const banned = usage.bannedUntil * 1000 > Date.now();
  return (
    <>
      <dl class="facts">
        <dt>Account</dt>
        <dd>
          <code>{read.account.budget}</code>
        </dd>
        <dt>This minute</dt>
        <dd>{`${usage.minute.count} admitted, until ${iso(usage.minute.reset)}`}</dd>
        <dt>Today</dt>
        <dd>{`${usage.day.count} admitted, until ${iso(usage.day.reset)}`}</dd>
        <dt>Refused in a row</dt>
        <dd>{usage.refusedInARow}</dd>
        <dt>Ban</dt>
        <dd id="account-ban">{banned ? `banned until ${iso(usage.bannedUntil)}` : "none"}</dd>
      </dl>
      {/* Offered unbanned too: it starts the refusal streak over, so an account about to be banned is not. */}
      <button
        type="button"
        class={banned ? "danger" : "quiet"}
        onClick={() =>
          void act(
            () => admin("POST", apiPath("keys", { key: keyId }, "unban")),
            "Unbanned, its refusal streak started over: every location admits it again within 5 seconds.",
          )
        }
      >
        Unban
      </button>
    </>
  );
}

function Keys({ account }: { account: AccountPage }) {
  return (
    <>
      <table>
        <caption>The account's keys</caption>
        <TableHead titles={["Name", "Id", "Plan", "State", "Scopes", "Expires"]} />
        <tbody>
          {account.keys.map((key) => (
            <tr key={key.id}>
              <td>{key.name}</td>
              <td>
                <code>{key.id}</code>
              </td>
              <td>{key.plan}</td>
              <td>
                {key.state}
                {key.revokedReason === "leaked" ? " (leaked)" : ""}
                {key.madeByLeakedKey && (
                  <strong class="warning">
                    {` made by the leaked key ${key.madeByLeakedKey}: have its owner rotate it`}
                  </strong>
                )}
              </td>
              <td>{key.scopes.join(", ")}</td>
              <td>
                <When iso={key.expiresAt} />
              </td>
            </tr>
          ))}
        </tbody>
      </table>
      {account.keys.map(
        ({ id, leak }) =>
          leak && (
            <Notice
              kind="error"
              text={
                `${id} was revoked as leaked at ${leak.leakedAt}${leak.foundAt ? `, found at ${leak.foundAt}` : ""}; ` +
                `endpoints disabled: ${leak.endpointsDisabled.join(", ") || "none"}; ` +
                `keys it made by rotation: ${leak.rotatedInto.join(", ") || "none"}.`
              }
            />
          ),
      )}
    </>
  );
}

function Limits({ account, act, keyId }: { account: AccountPage; act: Act; keyId: string }) {
  const own = account.keys.some((key) => key.limits);
  const submit = (event: Event) => {
    event.preventDefault();
    const fields = new FormData(event.currentTarget as HTMLFormElement);
    const body = { perMinute: Number(fields.get("perMinute")), perDay: Number(fields.get("perDay")) };
    void act(
      () => admin("POST", apiPath("keys", { key: keyId }, "limits"), { body }),
      "Limits set: every location counts by them from its next call.",
    );
  };
  return (
    <form onSubmit={submit}>
      <div class="controls">
        <label for="limit-minute">Per minute</label>
        <input
          id="limit-minute"
          name="perMinute"
          type="number"
          min={1}
          step={1}
          required
          value={account.limitsInForce.perMinute}
        />
        <label for="limit-day">Per day</label>
        <input
          id="limit-day"
          name="perDay"
          type="number"
          min={1}
          step={1}
          required
          value={account.limitsInForce.perDay}
        />
      </div>
      <p class="hint">
        {own
          ? "The limits in force: the account's own, kept in its keys' records until changed."
          : "The limits in force: its plan's. Set, they are kept in its keys' records until changed."}
      </p>
      <button type="submit">Set limits</button>
    </form>
  );
}

const Endpoints = ({ endpoints }: { endpoints: OperatorEndpoint[] }) =>
  endpoints.length === 0 ? (
    <p>No webhook endpoints.</p>
  ) : (
    <table>
      <caption>The account's webhook endpoints</caption>
      <TableHead titles={["URL", "Status"]} />
      <tbody>
        {endpoints.map((endpoint) => (
          <tr key={endpoint.id}>
            <td>
              <code>{endpoint.url}</code>
            </td>
            <td>{endpoint.status === "disabled" ? `disabled: ${endpoint.disabledReason ?? ""}` : "enabled"}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );

const Timeline = ({ account }: { account: AccountPage }) => (
  <table>
    <caption>Newest first: every key operation, console sign-in and endpoint action, with who did it</caption>
    <TableHead titles={["When", "What", "On", "Who", "Details"]} />
    <tbody>
      {account.timeline.map((row) => (
        <tr>
          <td>
            <When iso={row.at} />
          </td>
          <td>
            {row.operation}
            {row.outcome ? ` (${row.outcome})` : ""}
          </td>
          <td>
            <code>{row.subject}</code>
          </td>
          <td>{row.actor}</td>
          <td>
            <code>{JSON.stringify(row.changes)}</code>
          </td>
        </tr>
      ))}
    </tbody>
  </table>
);

/** A single-use sign-in link to the callers' console, shown once, for the operator to hand to the key's holder. */
function ConsoleLink({ keyId, failed }: { keyId: string; failed: (message: string) => void }) {
  const [made, setMade] = useLiveState<{ url: string; expiresAt: string }>();
  const make = async () => {
    try {
      setMade(await admin<{ url: string; expiresAt: string }>("POST", apiPath("keys", { key: keyId }, "console-link")));
    } catch (error) {
      failed(messageOf(error));
    }
  };
  return made ? (
    <ShownOnce
      key={made.url}
      label={`A callers' console sign-in link for ${keyId}, until ${made.expiresAt}: hand it to the key's holder`}
      value={made.url}
    />
  ) : (
    <button type="button" class="quiet" onClick={make}>
      Make a callers' console link
    </button>
  );
}

const Refused = ({ text }: { text: string }) => (
  <>
    <h1 tabindex={-1}>Account</h1>
    <Notice text={text} kind="error" />
  </>
);

export const AccountView: OperatorView = ({ route: [keyId] }) =>
  !keyId ? (
    <Refused text="Open an account from a key found in Keys." />
  ) : // The address's parts are whoever sent the link's to write: nothing is drawn, nor sent, for a non-id.
  !isId("key", keyId) ? (
    <Refused
      text={`${JSON.stringify(keyId.slice(0, 40))} is not a key id: open an account from a key found in Keys.`}
    />
  ) : (
    <Account keyId={keyId} />
  );
