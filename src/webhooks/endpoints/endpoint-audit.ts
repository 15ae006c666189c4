import { OperationNotTaken } from "../../keys/audit";
import { ApiError } from "../../framework/api-error";
import type { Context } from "hono";
import type { AppEnv } from "../../framework/app-env";
import { keyOfCaller } from "../../keys/require-api-key";
import { auditedEndpointChange, type EndpointEvent } from "../../webhook-delivery/endpoint-audit-rows";

/**
 * An owner's action with its audit row, for an action the service may
 * refuse (an ApiError returned): refused, the row is taken back and the
 * refusal is the answer. The key that asked is who did it.
 */
export async function auditedUnlessRefused<T>(
  c: Context<AppEnv>,
  event: Pick<EndpointEvent, "endpointId" | "operation" | "changes">,
  action: () => Promise<T | ApiError>,
): Promise<T> {
  const audited = { ...event, actor: `key:${keyOfCaller(c).id}`, at: new Date().toISOString() };
  try {
    return await auditedEndpointChange(c.env.DB, audited, async () => {
      const result = await action();
      if (result instanceof ApiError) throw new OperationNotTaken(result.message, { cause: result });
      return result;
    });
  } catch (error) {
    if (error instanceof OperationNotTaken && error.cause instanceof ApiError) throw error.cause;
    throw error;
  }
}

