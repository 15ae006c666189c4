import { z } from "zod";
import { WebhookEndpoint } from "./webhook-endpoint-schemas";
import { endpointJson } from "./endpoint-json";
import type { WebhookEndpointRow } from "../../webhook-delivery/endpoint-table";

/** An endpoint as operators see it (docs/operations.md#webhooks): with its account and why it is disabled. */
export const OperatorEndpoint = WebhookEndpoint.extend({
  budget: z.string(),
  disabledAt: z.string().nullable(),
  disabledReason: z.string().nullable(),
  failingSince: z
    .string()
    .nullable()
    .describe(
      "Since when its deliveries fail; null while they succeed (as its lane last wrote it: on a change, and every 10 " +
        "minutes while it delivers)",
    ),
  lastDeliveredAt: z
    .string()
    .nullable()
    .describe("When a delivery to it last succeeded, within 10 minutes; null: none yet"),
});
export const OperatorReason = z
  .string()
  .trim()
  .min(1)
  .max(200)
  .optional()
  .describe('What the endpoint\'s owner is told, after "disabled by an operator"');

export const operatorJson = (row: WebhookEndpointRow) => ({
  ...endpointJson(row),
  budget: row.budget,
  disabledAt: row.disabled_at,
  disabledReason:
    row.disabled_reason && row.disabled_note ? `${row.disabled_reason}: ${row.disabled_note}` : row.disabled_reason,
  failingSince: row.failing_since,
  lastDeliveredAt: row.last_delivered_at,
});

/** What both operator operations on endpoints share. */
export const OPERATOR = { operator: true, tag: "Service", stability: "experimental", documented: false } as const;
