import { useEffect } from "hono/jsx/dom";
import { apiPath, call, messageOf } from "../../../kit/api-client";
import type { WebhookDelivery, WebhookEndpoint, WebhookTestResult } from "../../../kit/api-types";
import { DeliveryLog } from "../../../kit/delivery-log";
import { Notice, ShownOnce, When } from "../../../kit/parts";
import { ConfirmUrlForm } from "./confirm-url-form";
import { EditEndpointForm } from "./edit-endpoint-form";
import { type EndpointActions, FailingBanner, type Said } from "./endpoint-parts";
import { RecoverForm } from "./recover-form";
import { RotateSecretForm } from "./rotate-secret-form";
import { useLiveState } from "../../../kit/live-state";

/** How often the endpoint and its log are read again: deliveries made and retried, a disabling after failures. */
const REFRESH_MS = 5_000;

type Status = Said | { secret: { label: string; value: string; note: string } };

/** #/webhooks/<id>: one endpoint, what can be done to it, and its delivery log, following the service. */
export function EndpointPage({ id }: { id: string }) {
  const target = { endpoint: id };
  const [endpoint, setEndpoint] = useLiveState<WebhookEndpoint | Said>();
  const [deliveries, setDeliveries] = useLiveState<WebhookDelivery[] | Said>();
  const [status, setStatus] = useLiveState<Status>();

  const reloadLog = async () => {
    try {
      setDeliveries(
        (await call<{ data: WebhookDelivery[] }>("GET", apiPath("webhook-endpoints", target, "deliveries"))).data,
      );
    } catch (error) {
      setDeliveries({ text: messageOf(error), kind: "error" });
    }
  };
  const reload = async () => {
    try {
      setEndpoint(await call<WebhookEndpoint>("GET", apiPath("webhook-endpoints", target)));
    } catch (error) {
      return setEndpoint({ text: messageOf(error), kind: "error" });
    }
    await reloadLog();
  };
  const actions: EndpointActions = {
    target,
    act: async (work) => {
      try {
        await work();
      } catch (error) {
        setStatus({ text: messageOf(error), kind: "error" });
      }
    },
    say: setStatus,
    showSecret: (secret) => setStatus({ secret }),
    reload,
    reloadLog,
  };
  useEffect(() => {
    void reload();
    const timer = setInterval(() => void reload(), REFRESH_MS);
    return () => clearInterval(timer);
  }, []);

  const retry = (delivery: WebhookDelivery) =>
    delivery.outcome === "failed" && (
      <button
        type="button"
        onClick={() =>
          actions.act(async () => {
            await call("POST", apiPath("webhook-endpoints", target, "deliveries", { delivery: delivery.id }, "retry"));
            setStatus({ text: `Delivery of ${delivery.eventId} sent again.` });
            await reloadLog();
          })
        }
      >
        {`Retry ${delivery.eventId}`}
      </button>
    );

  const shown = endpoint && !("text" in endpoint) ? endpoint : undefined;
  return (
    <>
      <p>
        <a href="#/webhooks">← All endpoints</a>
      </p>
      <h1 tabindex={-1}>Endpoint</h1>
      <div>
        {status &&
          ("secret" in status ? (
            <>
              <ShownOnce key={status.secret.value} label={status.secret.label} value={status.secret.value} />
              <Notice text={status.secret.note} />
            </>
          ) : (
            <Notice {...status} />
          ))}
      </div>
      <div>{endpoint && (shown ? <Facts endpoint={shown} /> : <Notice {...(endpoint as Said)} />)}</div>
      {/* Keyed by status: the forms are drawn again when what they offer changes, never under someone's typing. */}
      {shown && <Actions key={shown.status} endpoint={shown} actions={actions} />}
      <div>
        {deliveries &&
          (Array.isArray(deliveries) ? (
            <>
              <h2>Delivery log</h2>
              <DeliveryLog deliveries={deliveries} action={retry} />
            </>
          ) : (
            <Notice {...deliveries} />
          ))}
      </div>
    </>
  );
}

function Facts({ endpoint }: { endpoint: WebhookEndpoint }) {
  return (
    <>
      {endpoint.status === "enabled" && endpoint.failingSince && <FailingBanner endpoint={endpoint} />}
      <dl class="facts">
        <dt>URL</dt>
        <dd>{endpoint.url}</dd>
        <dt>Event types</dt>
        <dd>{endpoint.types.join(", ")}</dd>
        <dt>Status</dt>
        <dd id="endpoint-status">
          {endpoint.status}
          {endpoint.disabledBy ? ` by ${endpoint.disabledBy}: ${endpoint.disabledReason ?? ""}` : ""}
        </dd>
        <dt>Ordering</dt>
        <dd id="endpoint-ordering">
          {endpoint.ordering === "fifo" ? "FIFO: one at a time, in event order" : "Concurrent: up to six at once"}
        </dd>
        <dt>Signing</dt>
        <dd id="endpoint-signing">
          {endpoint.signing === "ed25519" ? `Ed25519 (v1a), public key ${endpoint.publicKey}` : "HMAC secret (v1)"}
        </dd>
        <dt>Created</dt>
        <dd>
          <When iso={endpoint.createdAt} />
        </dd>
      </dl>
    </>
  );
}

/** Test, enable or disable, delete; and the forms. */
function Actions({ endpoint, actions }: { endpoint: WebhookEndpoint; actions: EndpointActions }) {
  const enabled = endpoint.status === "enabled";
  const path = apiPath("webhook-endpoints", actions.target);
  const toggle = () =>
    actions.act(async () => {
      await call("PATCH", path, { body: { status: enabled ? "disabled" : "enabled" } });
      actions.say({
        text: enabled
          ? "Disabled: nothing is delivered until you enable it."
          : "Enabled: deliveries resume with the next event.",
      });
      await actions.reload();
    });
  const test = () =>
    actions.act(async () => {
      const result = await call<WebhookTestResult>("POST", apiPath("webhook-endpoints", actions.target, "test"));
      actions.say(
        result.delivered
          ? { text: `Test event ${result.id} delivered: ${result.status} in ${result.durationMs} ms.` }
          : {
              text:
                `Test event ${result.id} not delivered: ${result.status ?? result.error ?? "no answer"} after ` +
                `${result.durationMs} ms.`,
              kind: "error",
            },
      );
    });
  const remove = () =>
    actions.act(async () => {
      if (!confirm(`Delete the endpoint ${endpoint.url}? Nothing more is delivered to it.`)) return;
      await call("DELETE", path);
      location.hash = "#/webhooks";
    });
  return (
    <div>
      <div class="row">
        <button type="button" onClick={test}>
          Send a test event
        </button>
        {endpoint.disabledForLeakedKey ? (
          <ConfirmUrlForm leakedKey={endpoint.disabledForLeakedKey} actions={actions} />
        ) : (
          <button type="button" onClick={toggle}>
            {enabled ? "Disable" : "Enable"}
          </button>
        )}
        <button type="button" class="danger" onClick={remove}>
          Delete endpoint
        </button>
      </div>
      <EditEndpointForm endpoint={endpoint} actions={actions} />
      <RotateSecretForm actions={actions} />
      <RecoverForm actions={actions} />
    </div>
  );
}
