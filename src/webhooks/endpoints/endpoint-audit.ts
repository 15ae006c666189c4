import { OperationNotTaken } from "../../lib/audit-row";
import { ApiError } from "../../framework/api-error";
import type { Context } from "hono";
import type { AppEnv } from "../../framework/app-env";
import { keyOfCaller } from "../../keys/caller";
import {
  auditedEndpointChange,
  countEndpointAction,
  type EndpointEvent,
} from "../../webhook-delivery/endpoint-audit-rows";
import { accountOf } from "../../account/key-record";

/**
 * An owner's action with its audit row, by the asking key: refused by the service (an ApiError returned), the row is
 * taken back and the refusal answered.
 */
export async function auditedUnlessRefused<T>(
  c: Context<AppEnv>,
  event: Pick<EndpointEvent, "endpointId" | "operation" | "changes">,
  action: () => Promise<T | ApiError>,
): Promise<T> {
  const caller = keyOfCaller(c);
  const audited = { ...event, actor: `key:${caller.id}`, at: new Date().toISOString(), budget: accountOf(caller) };
  if (COUNTED.has(event.operation)) return countedAction(c.env.DB, audited, action);
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

/** What is counted an hour a row rather than written a row each (countEndpointAction()). */
const COUNTED: ReadonlySet<EndpointEvent["operation"]> = new Set(["retry", "test"]);

/** A retry or a test event, counted once done; a refusal leaves no count. */
async function countedAction<T>(db: D1Database, event: EndpointEvent, action: () => Promise<T | ApiError>): Promise<T> {
  let result: T | ApiError;
  try {
    result = await action();
  } catch (error) {
    await countEndpointAction(db, event, true);
    throw error;
  }
  if (result instanceof ApiError) throw result;
  await countEndpointAction(db, event, false);
  return result;
}
