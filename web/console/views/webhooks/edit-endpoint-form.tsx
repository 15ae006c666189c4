import { apiPath, call } from "../../../kit/api-client";
import type { WebhookEndpoint } from "../../../kit/api-types";
import { type EndpointActions, fieldValue, TypePicker, typesIn } from "./endpoint-parts";

/** Its URL and types. */
export function EditEndpointForm({ endpoint, actions }: { endpoint: WebhookEndpoint; actions: EndpointActions }) {
  const submit = (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const body = { url: fieldValue(form, "edit-endpoint-url"), types: typesIn(form) };
    void actions.act(async () => {
      await call("PATCH", apiPath("webhook-endpoints", actions.target), { body });
      actions.say({ text: "Saved." });
      await actions.reload();
    });
  };
  return (
    <form onSubmit={submit}>
      <h2>Edit</h2>
      <label for="edit-endpoint-url">URL</label>
      <input id="edit-endpoint-url" type="url" required value={endpoint.url} autocomplete="off" />
      <TypePicker idPrefix="edit-endpoint" chosen={endpoint.types} />
      <button type="submit">Save</button>
    </form>
  );
}
