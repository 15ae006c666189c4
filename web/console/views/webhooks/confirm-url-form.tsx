import { apiPath, call } from "../../../kit/api-client";
import { Notice, noSpellcheck } from "../../../kit/parts";
import { type EndpointActions, fieldValue } from "./endpoint-parts";

/** An endpoint a leaked key made or aimed is enabled again only with its URL typed (docs/api.md#what-a-leak-ends). */
export function ConfirmUrlForm({ leakedKey, actions }: { leakedKey: string; actions: EndpointActions }) {
  const submit = (event: Event) => {
    event.preventDefault();
    const confirmUrl = fieldValue(event.currentTarget as HTMLFormElement, "confirm-url");
    void actions.act(async () => {
      await call("PATCH", apiPath("webhook-endpoints", actions.target), { body: { status: "enabled", confirmUrl } });
      actions.say({
        text: "Enabled: deliveries resume with the next event. Recover the window since the leak to send what failed.",
      });
      await actions.reload();
    });
  };
  return (
    <form id="confirm-url-form" onSubmit={submit}>
      <Notice
        kind="error"
        text={
          `The key ${leakedKey}, which made this endpoint or last changed where it delivers, was revoked as leaked: ` +
          "whoever held it may have pointed it at their own server. Check the URL above is yours, then type it to " +
          "enable the endpoint again."
        }
      />
      <label for="confirm-url">The endpoint's URL, to confirm</label>
      <input id="confirm-url" type="url" required autocomplete="off" {...noSpellcheck} />
      <button type="submit">Enable</button>
    </form>
  );
}
