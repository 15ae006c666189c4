import { ENDPOINT_NOTICE_TYPES, ORDER_EVENT_TYPES, type WebhookEndpoint } from "../../../kit/api-types";
import { Notice, type Said } from "../../../kit/parts";

export type { Said };

/** An endpoint whose every attempt fails, as the list and its page warn (docs/api.md#failing-endpoints). */
export const FailingBanner = ({ endpoint }: { endpoint: WebhookEndpoint }) => (
  <Notice
    kind="error"
    text={
      `Every delivery to ${endpoint.url} has failed since ${new Date(endpoint.failingSince!).toLocaleString()}` +
      (endpoint.lastDeliveredAt
        ? ` (the last one through: ${new Date(endpoint.lastDeliveredAt).toLocaleString()}). `
        : " (none has ever got through). ") +
      "Check the receiver and the delivery log. By default the service tells this account's endpoints that name " +
      "webhook_endpoint.failing after a day of it, and disables an endpoint whose every attempt fails for 5 days."
    }
  />
);

/** Checkboxes for the event types and the notices, each checked when `chosen` has it; read back with typesIn(). */
export const TypePicker = ({ idPrefix, chosen }: { idPrefix: string; chosen: readonly string[] }) => (
  <fieldset class="types">
    <legend>Event types</legend>
    {[...ORDER_EVENT_TYPES, ...ENDPOINT_NOTICE_TYPES].map((type) => (
      <span class="choice">
        <input type="checkbox" id={`${idPrefix}-${type}`} value={type} checked={chosen.includes(type)} />
        <label for={`${idPrefix}-${type}`}>{type}</label>
      </span>
    ))}
  </fieldset>
);

/** The types checked in a form's TypePicker. */
export const typesIn = (form: HTMLFormElement) =>
  [...form.querySelectorAll<HTMLInputElement>("fieldset.types input:checked")].map((box) => box.value);

/** What a form may do on the page: run a change (its failure said), say how it went, read the endpoint again. */
export interface EndpointActions {
  target: { endpoint: string };
  act(work: () => Promise<void>): Promise<void>;
  say(said: Said): void;
  showSecret(secret: { label: string; value: string; note: string }): void;
  reload(): Promise<void>;
  reloadLog(): Promise<void>;
}

/** The value of the field `id` in `form`. */
export const fieldValue = (form: HTMLFormElement, id: string) => form.querySelector<HTMLInputElement>(`#${id}`)!.value;
