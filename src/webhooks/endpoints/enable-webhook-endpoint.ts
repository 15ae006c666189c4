import { z } from "zod";
import { defineOperation } from "../../framework/operations/define-operation";
import { ApiError } from "../../framework/api-error";
import { jsonBody } from "../../framework/counted-body";
import { OperationNotTaken } from "../../lib/audit-row";
import { callDependency } from "../../lib/call-dependency";
import { wakeDispatcher } from "../../webhook-delivery/dispatcher-calls";
import { auditedEndpointChange } from "../../webhook-delivery/endpoint-audit-rows";
import { EndpointIdParams } from "./webhook-endpoint-schemas";
import { OPERATOR } from "./operator-webhook-endpoint";
import { enableEndpoint } from "../../webhook-delivery/endpoint-table";

/** Enables an endpoint whoever disabled it, audited: the one way to lift an operator's disabling. */
export const enableWebhookEndpoint = defineOperation({
  ...OPERATOR,
  operationId: "enableWebhookEndpoint",
  method: "post",
  path: "/webhook-endpoints/{endpointId}/enable",
  summary: "Enable a webhook endpoint",
  description:
    "Deliveries resume with the next event, whoever disabled it (an operator's disabling is lifted only here). " +
    "Audited with the operator's name.",
  params: { schema: EndpointIdParams, invalid: { code: "not_found", message: "No such webhook endpoint." } },
  responses: {
    200: { description: "Enabled", body: z.object({ endpointId: z.string(), status: z.literal("enabled") }) },
  },
  errors: ["not_found"],
  async handle(c, { endpointId }) {
    const db = c.env.DB;
    const actor = c.get("operatorActor") ?? "operator";
    const at = new Date().toISOString();
    try {
      await auditedEndpointChange(db, { endpointId, operation: "enable", changes: {}, actor, at }, async () => {
        if (!(await callDependency("D1", () => enableEndpoint(db, endpointId, at))))
          throw new OperationNotTaken("no such endpoint");
      });
    } catch (error) {
      if (error instanceof OperationNotTaken) throw new ApiError("not_found", `No webhook endpoint ${endpointId}.`);
      throw error;
    }
    wakeDispatcher(c);
    return jsonBody(c, { endpointId, status: "enabled" as const });
  },
});
