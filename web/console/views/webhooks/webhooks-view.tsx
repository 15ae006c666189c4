import { isId } from "../../../kit/api-client";
import { Notice } from "../../../kit/parts";
import type { View } from "../../console-view";
import { EndpointList } from "./endpoint-list";
import { EndpointPage } from "./endpoint-page";

/** #/webhooks: the account's endpoints; #/webhooks/<id>: one endpoint. Needs the webhooks:manage scope. */
export const WebhooksView: View = ({ session, route }) => {
  const [id] = route;
  if (!session.key.scopes.includes("webhooks:manage"))
    return (
      <Refused
        heading="Webhooks"
        text={
          "This key cannot manage webhooks: it lacks the webhooks:manage scope (it has " +
          `${session.key.scopes.join(", ")}).`
        }
      />
    );
  if (id === undefined || id === "") return <EndpointList />;
  // The address's parts are whoever sent the link's to write: nothing is drawn, nor sent, for what is not an id.
  if (!isId("endpoint", id))
    return (
      <Refused
        heading="Endpoint"
        text={`${JSON.stringify(id.slice(0, 40))} is not an endpoint id: open one from the list.`}
      />
    );
  return <EndpointPage id={id} />;
};

const Refused = ({ heading, text }: { heading: string; text: string }) => (
  <>
    <h1 tabindex={-1}>{heading}</h1>
    <Notice text={text} kind="error" />
  </>
);
