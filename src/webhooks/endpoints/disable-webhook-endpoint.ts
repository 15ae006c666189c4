import { z } from "zod";
import { defineOperation } from "../../framework/operations/define-operation";
import { ApiError } from "../../framework/api-error";
import { OperationNotTaken } from "../../lib/audit-row";
import { auditedEndpointChange } from "../../webhook-delivery/endpoint-audit-rows";
import { callDependency } from "../../lib/call-dependency";
import { EndpointIdParams } from "./webhook-endpoint-schemas";
import { jsonBody } from "../../framework/counted-body";
import { readJsonBody } from "../../framework/operations/read-json-body";
import { OPERATOR, OperatorReason } from "./operator-webhook-endpoint";
import { disableEndpoint } from "../../webhook-delivery/endpoint-table";

const DisableBody = z.object({ reason: OperatorReason });

/** Disables an endpoint now, audited (a leaked secret, an abusive receiver). */
export const disableWebhookEndpoint = defineOperation({
  ...OPERATOR,
  operationId: "disableWebhookEndpoint",
  method: "post",
  path: "/webhook-endpoints/{endpointId}/disable",
  summary: "Disable a webhook endpoint",
  description:
    "Nothing more is delivered to it; its owner sees it disabled by an operator (never which one), with " +
    "the reason if " +
    "one is sent. Audited with the operator's name.",
  params: { schema: EndpointIdParams, invalid: { code: "not_found", message: "No such webhook endpoint." } },
  requestBody: { description: "Optional: the reason the owner is told", schema: DisableBody },
  responses: {
    200: { description: "Disabled", body: z.object({ endpointId: z.string(), status: z.literal("disabled") }) },
  },
  errors: ["not_found", "invalid_body", "unsupported_media_type", "body_too_large"],
  async handle(c, { endpointId }) {
    const db = c.env.DB;
    const at = new Date().toISOString();
    const actor = c.get("operatorActor") ?? "operator";
    // The body is optional: a request without one (the keys command, curl) disables with no reason given.
    const { reason } = c.req.header("Content-Type") === undefined ? {} : await readJsonBody(c, DisableBody);
    const disabled = auditedEndpointChange(
      db,
      { endpointId, operation: "disable", changes: reason ? { reason } : {}, actor, at },
      async () => {
        // No such endpoint: nothing was done, so its audit row is taken back.
        if (
          !(await callDependency("D1", () =>
            disableEndpoint(db, endpointId, `disabled by the operator ${actor}`, at, reason ?? null),
          ))
        )
          throw new OperationNotTaken("no such endpoint");
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
});
