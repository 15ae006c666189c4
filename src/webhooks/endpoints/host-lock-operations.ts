/**
 * An operator's lock on a host (docs/operations.md#webhooks): `POST /admin/host-locks` disables every endpoint on it,
 * of every account, and refuses every URL on it until `DELETE /admin/host-locks/{host}`. Lifting enables nothing.
 * Audited in the lock's row and each endpoint's audit.
 */
import { z } from "zod";
import { defineOperation } from "../../framework/operations/define-operation";
import { ApiError } from "../../framework/api-error";
import { jsonBody } from "../../framework/counted-body";
import { readJsonBody } from "../../framework/operations/read-json-body";
import { callDependency } from "../../lib/call-dependency";
import { OperationNotTaken } from "../../lib/audit-row";
import { auditedEndpointChange } from "../../webhook-delivery/endpoint-audit-rows";
import { endpointsNaming, liftHostLock, lockHost } from "../../webhook-delivery/host-lock-table";
import { OPERATOR, OperatorReason } from "./operator-webhook-endpoint";
import { normalHost, webhookHost } from "./webhook-url";
import { disableEndpoint } from "../../webhook-delivery/endpoint-table";

const HOST_RULE = "a host name alone, such as receiver.example (no scheme, port or path)";
const LockBody = z.strictObject({
  host: z.string().max(253).describe(HOST_RULE),
  reason: OperatorReason,
});
const HostParams = z.object({ host: z.string().max(253) });
const Locked = z.object({ host: z.string(), endpointsDisabled: z.array(z.string()) });

const hostOf = (text: string) => {
  const host = normalHost(text);
  if (host === undefined)
    throw new ApiError("invalid_body", `host must be ${HOST_RULE}; got ${JSON.stringify(text.slice(0, 100))}.`);
  return host;
};

export const lockHostOperation = defineOperation({
  ...OPERATOR,
  operationId: "lockHost",
  method: "post",
  path: "/host-locks",
  summary: "Lock a host: its endpoints disabled, its URLs refused",
  description:
    "Every webhook endpoint on the host is disabled as by an operator, and no account may point one at it until the " +
    "lock is lifted. Audited with the operator's name.",
  requestBody: { description: "The host, in any spelling, and the reason owners are told", schema: LockBody },
  responses: { 200: { description: "Locked", body: Locked } },
  errors: ["invalid_body", "unsupported_media_type", "body_too_large"],
  async handle(c) {
    const body = await readJsonBody(c, LockBody);
    const host = hostOf(body.host);
    const db = c.env.DB;
    const at = new Date().toISOString();
    const actor = c.get("operatorActor") ?? "operator";
    // The lock first: from here on no URL on the host is taken, so none of its endpoints can be missed below.
    await callDependency("D1", () => lockHost(db, host, body.reason ?? null, at, actor));
    const { results } = await callDependency("D1", () => endpointsNaming(db, host));
    const disabled: string[] = [];
    for (const { id } of results.filter(({ url }) => webhookHost(url) === host)) {
      try {
        await auditedEndpointChange(
          db,
          {
            endpointId: id,
            operation: "disable",
            changes: { hostLock: host, ...(body.reason && { reason: body.reason }) },
            actor,
            at,
          },
          async () => {
            if (
              !(await callDependency("D1", () =>
                disableEndpoint(db, id, `the host ${host} locked by the operator ${actor}`, at, body.reason ?? null),
              ))
            )
              throw new OperationNotTaken("no such endpoint");
          },
        );
        disabled.push(id);
      } catch (error) {
        // Deleted meanwhile: nothing to disable, and no audit row stays for it.
        if (!(error instanceof OperationNotTaken)) throw error;
      }
    }
    return jsonBody(c, { host, endpointsDisabled: disabled });
  },
});

export const liftHostLockOperation = defineOperation({
  ...OPERATOR,
  operationId: "liftHostLock",
  method: "delete",
  path: "/host-locks/{host}",
  summary: "Lift a host's lock",
  description:
    "URLs on the host are taken again; its endpoints stay disabled until an operator enables each. 404 " +
    "for a host not " +
    "locked. Audited with the operator's name.",
  params: { schema: HostParams, invalid: { code: "not_found", message: "No such host lock." } },
  responses: { 204: { description: "Lifted" } },
  errors: ["not_found"],
  async handle(c, { host }) {
    const normal = normalHost(host);
    const lifted =
      normal !== undefined &&
      (await callDependency("D1", () =>
        liftHostLock(c.env.DB, normal, new Date().toISOString(), c.get("operatorActor") ?? "operator"),
      ));
    if (!lifted) throw new ApiError("not_found", `No lock on the host ${host.slice(0, 100)}.`);
    return c.body(null, 204);
  },
});
