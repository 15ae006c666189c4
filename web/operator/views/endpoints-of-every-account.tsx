import { useEffect, useRef } from "hono/jsx/dom";
import { apiPath, messageOf } from "../../kit/api-client";
import type { WebhookDelivery } from "../../kit/api-types";
import { DeliveryLog } from "../../kit/delivery-log";
import { Notice, type Said, When, TableHead } from "../../kit/parts";
import { admin, useActing } from "../operator-api";
import type { OperatorEndpoint, OperatorView } from "../operator-api-types";
import { useLiveState } from "../../kit/live-state";

type Act = ReturnType<typeof useActing>["act"];
type Log = { endpoint: OperatorEndpoint; deliveries: WebhookDelivery[] } | Said;

/**
 * Every endpoint of every account (GET /admin/webhook-endpoints): lock one with a reason its owner is told, or unlock
 * it; read any endpoint's delivery log, as its owner does, with how its newest deliveries went.
 */
function EveryEndpoint() {
  const [endpoints, setEndpoints] = useLiveState<OperatorEndpoint[]>();
  const [log, setLog] = useLiveState<Log>();
  const load = async () => {
    try {
      setEndpoints((await admin<{ data: OperatorEndpoint[] }>("GET", "/webhook-endpoints")).data);
    } catch (error) {
      setStatus({ text: messageOf(error), kind: "error" });
    }
  };
  const { status, setStatus, act } = useActing(load);
  useEffect(() => void load(), []);

  const readLog = async (endpoint: OperatorEndpoint) => {
    try {
      const path = apiPath("webhook-endpoints", { endpoint: endpoint.id }, "deliveries");
      setLog({ endpoint, deliveries: (await admin<{ data: WebhookDelivery[] }>("GET", path)).data });
    } catch (error) {
      setLog({ text: messageOf(error), kind: "error" });
    }
  };

  return (
    <>
      <h1 tabindex={-1}>Webhooks</h1>
      <p>
        Locking an endpoint stops its deliveries; its owner sees that an operator locked it (never which) and the reason
        given, and cannot undo it.
      </p>
      <div>{status && <Notice {...status} />}</div>
      <div id="webhook-list">
        {endpoints &&
          (endpoints.length === 0 ? (
            <p>No webhook endpoints.</p>
          ) : (
            <table>
              <caption>Every endpoint of every account</caption>
              <TableHead titles={["URL, of account", "Status and deliveries", "Actions"]} />
              <tbody>
                {endpoints.map((endpoint) => (
                  <EndpointRow key={endpoint.id} endpoint={endpoint} act={act} readLog={readLog} />
                ))}
              </tbody>
            </table>
          ))}
      </div>
      <section id="endpoint-log" aria-live="polite">
        {log && ("text" in log ? <Notice {...log} /> : <EndpointLog {...log} />)}
      </section>
    </>
  );
}

function EndpointRow({
  endpoint,
  act,
  readLog,
}: {
  endpoint: OperatorEndpoint;
  act: Act;
  readLog: (endpoint: OperatorEndpoint) => Promise<void>;
}) {
  const target = { endpoint: endpoint.id };
  const reasonId = `reason-${endpoint.id}`;
  const lock = (event: Event) => {
    event.preventDefault();
    const reason = String(new FormData(event.currentTarget as HTMLFormElement).get("reason") ?? "").trim();
    void act(
      () => admin("POST", apiPath("webhook-endpoints", target, "disable"), { body: reason ? { reason } : {} }),
      `Locked ${endpoint.id}: nothing more is delivered to it.`,
    );
  };
  const unlock = () =>
    void act(() => admin("POST", apiPath("webhook-endpoints", target, "enable")), `Unlocked ${endpoint.id}.`);
  return (
    <tr>
      <td>
        <code>{endpoint.url}</code>
        <br />
        {"of "}
        <a href={`#/budget/${endpoint.budget}`}>
          <code>{endpoint.budget}</code>
        </a>
      </td>
      <td>
        {endpoint.status === "disabled" ? (
          <>
            {"disabled "}
            <When iso={endpoint.disabledAt} />
            <br />
            {endpoint.disabledReason ?? ""}
          </>
        ) : (
          "enabled"
        )}
        <br />
        {endpoint.failingSince ? (
          <strong>
            {"failing since "}
            <When iso={endpoint.failingSince} />
          </strong>
        ) : endpoint.lastDeliveredAt ? (
          "delivering"
        ) : (
          "no delivery yet"
        )}
        {endpoint.lastDeliveredAt && (
          <>
            {"; last delivered "}
            <When iso={endpoint.lastDeliveredAt} />
          </>
        )}
      </td>
      <td>
        {endpoint.status === "enabled" ? (
          <form class="row" onSubmit={lock}>
            <label for={reasonId}>Reason for its owner</label>
            <input id={reasonId} name="reason" type="text" maxlength={200} size={8} autocomplete="off" />
            <button type="submit" class="danger">
              Lock
            </button>
          </form>
        ) : (
          <button type="button" onClick={unlock}>
            Unlock
          </button>
        )}
        <button
          type="button"
          class="quiet"
          aria-label={`Delivery log of ${endpoint.url}`}
          onClick={() => void readLog(endpoint)}
        >
          Delivery log
        </button>
      </td>
    </tr>
  );
}

/** One endpoint's delivery log, with how its newest deliveries went; its heading takes the focus when it is read. */
function EndpointLog({ endpoint, deliveries }: { endpoint: OperatorEndpoint; deliveries: WebhookDelivery[] }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => heading.current?.focus(), [deliveries]);
  const failed = deliveries.filter((delivery) => delivery.outcome === "failed").length;
  const lastDelivered = deliveries.find((delivery) => delivery.outcome === "delivered");
  return (
    <>
      <h2 tabindex={-1} ref={heading}>
        {"Delivery log of "}
        <code>{endpoint.url}</code>
      </h2>
      <p id="endpoint-health">
        {`${failed} of the newest ${deliveries.length} deliveries failed; the newest delivered: `}
        {lastDelivered ? <code>{lastDelivered.eventId}</code> : "none"}
      </p>
      <DeliveryLog deliveries={deliveries} />
    </>
  );
}

export const EveryEndpointView: OperatorView = () => <EveryEndpoint />;
