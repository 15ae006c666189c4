import { z } from "zod";
import { defineOperation } from "../framework/operations/define-operation";
import { ApiError } from "../framework/api-error";
import { OperationNotTaken, withAuditRow } from "../keys/audit";
import { callDependency } from "../lib/dependency";
import { EndpointIdParams, WebhookEndpoint } from "./webhook-endpoint-schemas";
import { allEndpoints, disableEndpoint, endpointJson, type WebhookEndpointRow } from "./webhook-endpoint-store";
import { jsonBody } from "../framework/counted-body";

const OperatorEndpoint = WebhookEndpoint.extend({ budget: z.string(), disabledAt: z.string().nullable(), disabledReason: z.string().nullable() });
const operatorJson = (row: WebhookEndpointRow) => ({ ...endpointJson(row), budget: row.budget, disabledAt: row.disabled_at, disabledReason: row.disabled_reason });

const OPERATOR = { operator: true, tag: "Service", stability: "experimental", documented: false } as const;

/**
 * The operator API's webhook endpoints (docs/operations.md#webhooks): every
 * budget's, with their status, and disabling one, audited as every operator
 * action is (the row first: keys/audit.ts).
 */
export const webhookOperatorOperations = [
  defineOperation({
    ...OPERATOR,
    operationId: "listAllWebhookEndpoints",
    method: "get",
    path: "/webhook-endpoints",
    summary: "Every webhook endpoint, of every budget",
    description: "With its budget, its status and why it was disabled. Never a secret.",
    responses: { 200: { description: "The endpoints", body: z.object({ data: z.array(OperatorEndpoint) }) } },
    errors: [],
    async handle(c) {
      return jsonBody(c, { data: (await callDependency("D1", () => allEndpoints(c.env.DB))).map(operatorJson) });
    },
  }),
  defineOperation({
    ...OPERATOR,
    operationId: "disableWebhookEndpoint",
    method: "post",
    path: "/webhook-endpoints/{endpointId}/disable",
    summary: "Disable a webhook endpoint",
    description: "Nothing more is delivered to it; its owner sees it disabled. Audited with the operator's name.",
    params: { schema: EndpointIdParams, invalid: { code: "not_found", message: "No such webhook endpoint." } },
    responses: { 200: { description: "Disabled", body: z.object({ endpointId: z.string(), status: z.literal("disabled") }) } },
    errors: ["not_found"],
    async handle(c, { endpointId }) {
      const db = c.env.DB;
      const at = new Date().toISOString();
      const actor = c.get("operator") ?? "operator";
      const disabled = withAuditRow(
        async () =>
          (await callDependency("D1", () =>
            db
              .prepare(
                "INSERT INTO webhook_endpoint_events (event_id, at, operation, endpoint_id, changes, actor) VALUES (?1, ?2, 'disable', ?3, '{}', ?4) " +
                  "ON CONFLICT (event_id) DO UPDATE SET event_id = excluded.event_id RETURNING id",
              )
              .bind(crypto.randomUUID(), at, endpointId, actor)
              .first<number>("id"),
          ))!,
        {
          remove: (rowId) => callDependency("D1", () => db.prepare("DELETE FROM webhook_endpoint_events WHERE id = ?1").bind(rowId).run()),
          markUnknown: (rowId) => callDependency("D1", () => db.prepare("UPDATE webhook_endpoint_events SET outcome = 'unknown' WHERE id = ?1").bind(rowId).run()),
        },
        async () => {
          // No such endpoint: nothing was done, so its audit row is taken back.
          if (!(await callDependency("D1", () => disableEndpoint(db, endpointId, `disabled by the operator ${actor}`, at)))) throw new OperationNotTaken("no such endpoint");
        },
      );
      try {
        await disabled;
      } catch (error) {
        if (error instanceof OperationNotTaken) throw new ApiError("not_found", `No webhook endpoint ${endpointId}.`);
        throw error;
      }
      return jsonBody(c, { endpointId, status: "disabled" as const });
    },
  }),
];
