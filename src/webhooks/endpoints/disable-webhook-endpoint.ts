import { z } from "zod";
import { defineOperation } from "../../framework/operations/define-operation";
import { ApiError } from "../../framework/api-error";
import { OperationNotTaken } from "../../keys/audit";
import { auditedEndpointChange } from "./endpoint-audit";
import { callDependency } from "../../lib/dependency";
import { EndpointIdParams } from "./webhook-endpoint-schemas";
import { disableEndpoint } from "../../webhook-delivery/endpoint-table";
import { jsonBody } from "../../framework/counted-body";
import { OPERATOR } from "./operator-webhook-endpoint";

/** Disables an endpoint now, audited (a leaked secret, an abusive receiver). */
export const disableWebhookEndpoint = defineOperation({
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
    const disabled = auditedEndpointChange(db, { endpointId, operation: "disable", changes: {}, actor, at }, async () => {
      // No such endpoint: nothing was done, so its audit row is taken back.
      if (!(await callDependency("D1", () => disableEndpoint(db, endpointId, `disabled by the operator ${actor}`, at)))) throw new OperationNotTaken("no such endpoint");
    });
    try {
      await disabled;
    } catch (error) {
      if (error instanceof OperationNotTaken) throw new ApiError("not_found", `No webhook endpoint ${endpointId}.`);
      throw error;
    }
    return jsonBody(c, { endpointId, status: "disabled" as const });
  },
});
