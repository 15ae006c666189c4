/** An endpoint as its owner and operators see it: never its secret, nor the disabling operator's name to its owner. */
import type { z } from "zod";
import type { WebhookEndpoint } from "./webhook-endpoint-schemas";
import type { WebhookEndpointRow } from "../../webhook-delivery/endpoint-table";

/** The endpoint as its owner sees it. */
export const endpointJson = (row: WebhookEndpointRow): z.output<typeof WebhookEndpoint> => ({
  id: row.id,
  url: row.url,
  types: row.types.split(",") as z.output<typeof WebhookEndpoint>["types"],
  status: row.status,
  disabledBy: row.status === "disabled" ? row.disabled_by : null,
  disabledReason: row.status === "disabled" ? disabledBecause(row) : null,
  disabledForLeakedKey: row.status === "disabled" ? row.disabled_for_leak : null,
  failingSince: row.failing_since,
  lastDeliveredAt: row.last_delivered_at,
  rateLimit: row.rate_limit,
  ordering: row.ordering,
  signing: row.public_key === null ? "hmac" : "ed25519",
  publicKey: row.public_key,
  createdAt: row.created_at,
});

/** Why an endpoint is disabled, as its owner is told: the service's reasons, never an operator's name. */
export function disabledBecause(
  row: Pick<WebhookEndpointRow, "disabled_by" | "disabled_reason" | "disabled_note">,
): string {
  if (row.disabled_by === "owner") return "disabled by its owner";
  if (row.disabled_by === "service" && row.disabled_reason) return `disabled by the service: ${row.disabled_reason}`;
  return `disabled by an operator${row.disabled_note ? `: ${row.disabled_note}` : ""}`;
}
