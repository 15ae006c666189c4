import type { Context } from "hono";
import { ApiError } from "../../framework/api-error";
import type { AppEnv } from "../../framework/app-env";
import { accountOf } from "../../account/key-record";
import { CHALLENGE } from "../../keys/caller";
import { keyOfCaller } from "../../keys/require-api-key";
import { WEBHOOK_READER_SCOPE } from "../../account/key-rules";
import { EndpointIdParams } from "./webhook-endpoint-schemas";

/** The calling key's account: its endpoints are the account's, so a rotated pair shares them. */
export function accountOfCaller(c: Context<AppEnv>): string {
  return accountOf(keyOfCaller(c));
}

export const notFound = (id: string) =>
  new ApiError("webhook_endpoint_not_found", `No webhook endpoint ${id} in this key's account.`);

/**
 * Making or changing an endpoint also needs the scope of what it will carry, or it would receive what the feed refuses.
 */
export function requireEventScope(c: Context<AppEnv>): void {
  if (keyOfCaller(c).scopes.includes(WEBHOOK_READER_SCOPE)) return;
  throw new ApiError(
    "insufficient_scope",
    `Webhook endpoints are sent whole orders: making or changing one needs the ${WEBHOOK_READER_SCOPE} scope too, ` +
      `which this key lacks.`,
    {
      "WWW-Authenticate": `${CHALLENGE}, error="insufficient_scope", scope="${WEBHOOK_READER_SCOPE}"`,
    },
  );
}

/** What every webhook endpoint operation shares: the scope, the tag, the stability, the endpoint id in the path. */
export const WEBHOOKS = { scope: "webhooks:manage", tag: "Webhooks", stability: "beta" } as const;
export const ENDPOINT_PARAMS = {
  schema: EndpointIdParams,
  invalid: {
    code: "webhook_endpoint_not_found",
    message: "No such webhook endpoint: ids look like we_ and 20 hex digits.",
  },
} as const;
