import { useEffect } from "hono/jsx/dom";
import { call, messageOf } from "../../../kit/api-client";
import type { WebhookEndpoint } from "../../../kit/api-types";
import { Notice, When, TableHead } from "../../../kit/parts";
import { AddEndpointForm, AddedEndpoint, type AddOutcome } from "./add-endpoint-form";
import { FailingBanner, type Said } from "./endpoint-parts";
import { useLiveState } from "../../../kit/live-state";

/** #/webhooks: the account's endpoints, the failing ones warned of, and a form to add one. */
export function EndpointList() {
  const [endpoints, setEndpoints] = useLiveState<WebhookEndpoint[] | Said>();
  const [added, setAdded] = useLiveState<AddOutcome>();
  const load = async () => {
    try {
      setEndpoints((await call<{ data: WebhookEndpoint[] }>("GET", "/webhook-endpoints")).data);
    } catch (error) {
      setEndpoints({ text: messageOf(error), kind: "error" });
    }
  };
  useEffect(() => void load(), []);
  return (
    <>
      <h1 tabindex={-1}>Webhooks</h1>
      <div>{added && <AddedEndpoint outcome={added} />}</div>
      <div>
        {endpoints && (Array.isArray(endpoints) ? <Endpoints endpoints={endpoints} /> : <Notice {...endpoints} />)}
      </div>
      <AddEndpointForm
        added={async (outcome) => {
          setAdded(outcome);
          if ("created" in outcome) await load();
        }}
      />
    </>
  );
}

function Endpoints({ endpoints }: { endpoints: WebhookEndpoint[] }) {
  const failing = endpoints.filter((endpoint) => endpoint.status === "enabled" && endpoint.failingSince !== null);
  return (
    <>
      {failing.map((endpoint) => (
        <FailingBanner endpoint={endpoint} />
      ))}
      {endpoints.length === 0 ? (
        <p>No endpoints yet.</p>
      ) : (
        <table id="endpoints-table">
          <caption>Where this account's order events are delivered</caption>
          <TableHead titles={["URL", "Types", "Status", "Created"]} />
          <tbody>
            {endpoints.map((endpoint) => (
              <tr key={endpoint.id}>
                <td>
                  <a href={`#/webhooks/${endpoint.id}`}>{endpoint.url}</a>
                </td>
                <td>{endpoint.types.join(", ")}</td>
                <td>
                  {endpoint.status}
                  {endpoint.disabledBy ? ` (by ${endpoint.disabledBy})` : ""}
                  {endpoint.status === "enabled" && endpoint.failingSince && (
                    <strong>
                      , failing since <When iso={endpoint.failingSince} />
                    </strong>
                  )}
                </td>
                <td>
                  <When iso={endpoint.createdAt} />
                </td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </>
  );
}
