import { useRef } from "hono/jsx/dom";
import { apiPath, call } from "../../../kit/api-client";
import type { RotatedWebhookSecret } from "../../../kit/api-types";
import type { EndpointActions } from "./endpoint-parts";

const OVERLAPS = [
  { seconds: 3_600, label: "1 hour" },
  { seconds: 86_400, label: "1 day" },
  { seconds: 604_800, label: "7 days" },
  { seconds: 0, label: "None: the old secret stops now" },
];

/** A new signing secret (or key pair), the old one signing beside it for the overlap chosen. */
export function RotateSecretForm({ actions }: { actions: EndpointActions }) {
  const overlap = useRef<HTMLSelectElement>(null);
  const submit = (event: Event) => {
    event.preventDefault();
    void actions.act(async () => {
      const rotated = await call<RotatedWebhookSecret>(
        "POST",
        apiPath("webhook-endpoints", actions.target, "rotate-secret"),
        { body: { overlapSeconds: Number(overlap.current!.value) } },
      );
      const note =
        `Until ${new Date(rotated.previousSecretExpiresAt).toLocaleString()} each delivery is signed with ` +
        "both secrets.";
      actions.showSecret(
        rotated.secret === undefined
          ? { label: "The new public key, to verify deliveries with (v1a)", value: rotated.publicKey ?? "", note }
          : { label: "The new signing secret", value: rotated.secret, note },
      );
    });
  };
  return (
    <form onSubmit={submit}>
      <h2>Rotate the signing secret</h2>
      <label for="rotate-overlap">Old secret also signs for</label>
      <select id="rotate-overlap" ref={overlap}>
        {OVERLAPS.map(({ seconds, label }) => (
          <option value={String(seconds)} selected={seconds === 86_400}>
            {label}
          </option>
        ))}
      </select>
      <button type="submit">Rotate secret</button>
    </form>
  );
}
