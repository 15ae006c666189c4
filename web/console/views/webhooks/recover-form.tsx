import { apiPath, call } from "../../../kit/api-client";
import { type EndpointActions, fieldValue } from "./endpoint-parts";

/** Every failed delivery since a time, sent again. */
export function RecoverForm({ actions }: { actions: EndpointActions }) {
  const submit = (event: Event) => {
    event.preventDefault();
    const since = new Date(fieldValue(event.currentTarget as HTMLFormElement, "recover-since")).toISOString();
    void actions.act(async () => {
      const result = await call<{ recovered: number; more: boolean }>(
        "POST",
        apiPath("webhook-endpoints", actions.target, "recover"),
        { body: { since } },
      );
      actions.say({
        text:
          `${result.recovered} failed ${result.recovered === 1 ? "delivery" : "deliveries"} sent again` +
          `${result.more ? "; more remain: recover again" : ""}.`,
      });
      await actions.reloadLog();
    });
  };
  return (
    <form onSubmit={submit}>
      <h2>Retry every failed delivery since a time</h2>
      <label for="recover-since">Since (your time)</label>
      <input id="recover-since" type="datetime-local" required step={1} />
      <button type="submit">Recover</button>
    </form>
  );
}
