import type { Child } from "hono/jsx/dom";
import type { WebhookDelivery } from "./api-types";
import { When, TableHead } from "./parts";

/**
 * An endpoint's delivery log, newest first, each delivery with its latest attempts behind a disclosure. Both consoles
 * show it: the callers' with a retry for a failed delivery (`action`), the operators' read-only. Rows are keyed by
 * delivery, so a disclosure the reader opened stays open as the log is read again.
 */
export function DeliveryLog({
  deliveries,
  action = () => "",
}: {
  deliveries: readonly WebhookDelivery[];
  action?: (delivery: WebhookDelivery) => Child;
}) {
  if (deliveries.length === 0) return <p>No deliveries yet.</p>;
  return (
    <table class="deliveries-table">
      <caption>Newest first, each with its latest attempts</caption>
      <TableHead titles={["Event", "Outcome", "Attempts", "Next attempt", ""]} />
      <tbody>
        {deliveries.map((delivery) => (
          <tr key={delivery.id} data-delivery-id={delivery.id} data-outcome={delivery.outcome}>
            <td>
              <code>{delivery.eventId}</code>
            </td>
            <td>
              {delivery.outcome}
              {delivery.lastStatus !== null
                ? ` (${delivery.lastStatus})`
                : delivery.lastError
                  ? ` (${delivery.lastError})`
                  : ""}
              {/* A fifo endpoint's: it goes once the one before it is delivered or given up. */}
              {delivery.heldBehind && <span class="held">{` held behind ${delivery.heldBehind}`}</span>}
            </td>
            <td>
              <details>
                <summary>{`${delivery.attempts} attempt${delivery.attempts === 1 ? "" : "s"}`}</summary>
                <ol class="attempts">
                  {delivery.attemptLog.map((attempt) => (
                    <li>
                      <When iso={attempt.at} />
                      {` · ${attempt.status ?? "no answer"} · ${attempt.durationMs} ms`}
                      {attempt.error ? ` · ${attempt.error}` : ""}
                      {attempt.response !== null && <pre>{attempt.response}</pre>}
                    </li>
                  ))}
                </ol>
              </details>
            </td>
            <td>{delivery.nextAttemptAt ? <When iso={delivery.nextAttemptAt} /> : "—"}</td>
            <td>{action(delivery)}</td>
          </tr>
        ))}
      </tbody>
    </table>
  );
}
