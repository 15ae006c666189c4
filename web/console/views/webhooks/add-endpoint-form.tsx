import { call, messageOf } from "../../../kit/api-client";
import { ORDER_EVENT_TYPES, type CreatedWebhookEndpoint } from "../../../kit/api-types";
import { Notice, ShownOnce } from "../../../kit/parts";
import { type Said, TypePicker, typesIn } from "./endpoint-parts";

/** What adding an endpoint came to. */
export type AddOutcome = { created: CreatedWebhookEndpoint } | Said;

/** The endpoint added, its secret (or public key) shown once; or why it was not. */
export const AddedEndpoint = ({ outcome }: { outcome: AddOutcome }) =>
  "created" in outcome ? (
    <>
      <Notice text={`Added ${outcome.created.url}.`} />
      {outcome.created.secret === undefined ? (
        <ShownOnce
          key={outcome.created.id}
          label="Its public key, to verify deliveries with (v1a)"
          value={outcome.created.publicKey ?? ""}
        />
      ) : (
        <ShownOnce key={outcome.created.id} label="Its signing secret" value={outcome.created.secret} />
      )}
      <p>
        <a href={`#/webhooks/${outcome.created.id}`}>Open the endpoint</a>
      </p>
    </>
  ) : (
    <Notice {...outcome} />
  );

/** A new endpoint: its URL, types, ordering and signing. */
export function AddEndpointForm({ added }: { added: (outcome: AddOutcome) => Promise<void> }) {
  const submit = async (event: Event) => {
    event.preventDefault();
    const form = event.currentTarget as HTMLFormElement;
    const field = (name: string) => form.querySelector<HTMLInputElement | HTMLSelectElement>(`#new-endpoint-${name}`)!;
    try {
      const created = await call<CreatedWebhookEndpoint>("POST", "/webhook-endpoints", {
        body: {
          url: field("url").value,
          types: typesIn(form),
          signing: field("signing").value,
          ordering: field("ordering").value,
        },
      });
      field("url").value = "";
      await added({ created });
    } catch (error) {
      await added({ text: messageOf(error), kind: "error" });
    }
  };
  return (
    <form onSubmit={submit}>
      <h2>Add an endpoint</h2>
      <label for="new-endpoint-url">URL</label>
      <input id="new-endpoint-url" type="url" required placeholder="https://example.com/webhooks" autocomplete="off" />
      <TypePicker idPrefix="new-endpoint" chosen={ORDER_EVENT_TYPES} />
      <label for="new-endpoint-ordering">Ordering</label>
      <select id="new-endpoint-ordering">
        <option value="concurrent">Concurrent: up to six at once, in no order</option>
        <option value="fifo">FIFO: one at a time, in event order</option>
      </select>
      <label for="new-endpoint-signing">Signing</label>
      <select id="new-endpoint-signing">
        <option value="hmac">HMAC secret (v1): you hold the secret</option>
        <option value="ed25519">Ed25519 (v1a): you hold only a public key</option>
      </select>
      <button type="submit">Add endpoint</button>
    </form>
  );
}
