import { z } from "zod";
import { WebhookEndpoint } from "./webhook-endpoint-schemas";
import { type WebhookEndpointRow } from "../../webhook-delivery/endpoint-table";
import { endpointJson } from "./endpoint-json";

/** An endpoint as operators see it (docs/operations.md#webhooks): with its budget and why it is disabled. */
export const OperatorEndpoint = WebhookEndpoint.extend({ budget: z.string(), disabledAt: z.string().nullable(), disabledReason: z.string().nullable() });
export const operatorJson = (row: WebhookEndpointRow) => ({ ...endpointJson(row), budget: row.budget, disabledAt: row.disabled_at, disabledReason: row.disabled_reason && row.disabled_note ? `${row.disabled_reason}: ${row.disabled_note}` : row.disabled_reason });

/** What both operator operations on endpoints share; disabling is audited as every operator action is (the row first: keys/audit.ts). */
export const OPERATOR = { operator: true, tag: "Service", stability: "experimental", documented: false } as const;
