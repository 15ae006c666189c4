import type { Context } from "hono";
import { ApiError } from "../../framework/api-error";
import type { AppEnv } from "../../framework/app-env";
import { budgetOf, type ApiKeyRecord } from "../../keys/api-key-record";
import { EndpointIdParams } from "./webhook-endpoint-schemas";

/** The calling key's budget: its endpoints are the budget's, so a rotated pair shares them. */
export function budgetOfCaller(c: Context<AppEnv>): string {
  return budgetOf(keyOfCaller(c));
}

/** The calling key: every webhook operation is behind a key's scope. */
export function keyOfCaller(c: Context<AppEnv>): ApiKeyRecord {
  const caller = c.get("caller");
  if (caller.kind !== "key") throw new Error("a webhook operation ran without a key: its scope guard is missing");
  return caller.key;
}

export const notFound = (id: string) => new ApiError("webhook_endpoint_not_found", `No webhook endpoint ${id} in this key's budget.`);

/** What every webhook endpoint operation shares: the scope, the tag, the stability, the endpoint id in the path. */
export const WEBHOOKS = { scope: "webhooks:manage", tag: "Webhooks", stability: "beta" } as const;
export const ENDPOINT_PARAMS = { schema: EndpointIdParams, invalid: { code: "webhook_endpoint_not_found", message: "No such webhook endpoint: ids look like we_ and 20 hex digits." } } as const;
