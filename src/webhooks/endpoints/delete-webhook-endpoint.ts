import { defineOperation } from "../../framework/operations/define-operation";
import { ApiError } from "../../framework/api-error";
import { callDependency } from "../../lib/call-dependency";
import { laneOf } from "../../webhook-delivery/lane-calls";
import { logLine } from "../../lib/log";
import { accountOfCaller, notFound, WEBHOOKS, ENDPOINT_PARAMS } from "./webhook-endpoint-operation";
import { auditedUnlessRefused } from "./endpoint-audit";
import { deleteEndpoint } from "../../webhook-delivery/endpoint-table";

/** DELETE /v2/webhook-endpoints/{endpointId}: the endpoint and its deliveries. */
export const deleteWebhookEndpoint = defineOperation({
  ...WEBHOOKS,
  beyondItself: "webhook endpoints",
  operationId: "deleteWebhookEndpoint",
  method: "delete",
  path: "/webhook-endpoints/{endpointId}",
  summary: "Delete a webhook endpoint",
  description:
    "Nothing more is delivered to it, deliveries waiting for a retry included. One an operator disabled stays until " +
    "an operator enables it. Audited, with the key that asked.",
  params: ENDPOINT_PARAMS,
  responses: { 204: { description: "Deleted" } },
  errors: ["webhook_endpoint_not_found", "webhook_endpoint_locked", "key_acts_only_on_itself"],
  async handle(c, { endpointId }) {
    await auditedUnlessRefused(c, { endpointId, operation: "delete", changes: {} }, async () => {
      const deleted = await callDependency("D1", () => deleteEndpoint(c.env.DB, accountOfCaller(c), endpointId));
      if (deleted === "none") return notFound(endpointId);
      if (deleted === "locked")
        return new ApiError(
          "webhook_endpoint_locked",
          "An operator disabled this endpoint: it stays until an operator enables it.",
        );
      return deleted;
    });
    // Its lane empties itself at its next run when this fails: it finds its endpoint gone.
    c.executionCtx.waitUntil(
      laneOf(c.env, endpointId)
        .wipe()
        .catch((error: unknown) =>
          logLine(
            "warn",
            c.get("requestId"),
            "a deleted endpoint's lane was not emptied now; it empties itself at its next run",
            { endpointId, error: String(error) },
          ),
        ),
    );
    return c.body(null, 204);
  },
});
