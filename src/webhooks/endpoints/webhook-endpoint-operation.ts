import type { Context } from "hono";
import { ApiError } from "../../framework/api-error";
import type { AppEnv } from "../../framework/app-env";
import { accountOf } from "../../account/key-record";
import { keyOfCaller } from "../../keys/caller";
import { EndpointIdParams } from "./webhook-endpoint-schemas";

/** The calling key's account: its endpoints are the account's, so a rotated pair shares them. */
export function accountOfCaller(c: Context<AppEnv>): string {
  return accountOf(keyOfCaller(c));
}

export const notFound = (id: string) =>
  new ApiError("webhook_endpoint_not_found", `No webhook endpoint ${id} in this key's account.`);

/** What every webhook endpoint operation shares: the scope, the tag, the stability, the endpoint id in the path. */
export const WEBHOOKS = { scope: "webhooks:manage", tag: "Webhooks", stability: "beta" } as const;
export const ENDPOINT_PARAMS = {
  schema: EndpointIdParams,
  invalid: {
    code: "webhook_endpoint_not_found",
    message: "No such webhook endpoint: ids look like we_ and 20 hex digits.",
  },
} as const;
