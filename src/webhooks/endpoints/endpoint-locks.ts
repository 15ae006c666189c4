/**
 * An operator's lock on a webhook endpoint (docs/operations.md#webhooks), as
 * its owner's operations meet it: an endpoint an operator disabled can be
 * neither enabled, deleted nor moved by its owner, and no other endpoint of
 * its account may point at its URL, in whatever spelling (normalWebhookUrl);
 * and no endpoint of any account at a host an operator locked.
 */
import { ApiError } from "../../framework/api-error";
import { normalWebhookUrl } from "./webhook-url";

export const lockedUrl = () =>
  new ApiError(
    "webhook_endpoint_locked",
    "An operator disabled this account's endpoint for this URL: no endpoint of the account may point at it, until an " +
      "operator enables that one.",
  );

export const lockedHost = (host: string) =>
  new ApiError(
    "webhook_endpoint_locked",
    `An operator locked the host ${host}: no endpoint may point at it until an operator lifts the lock.`,
  );

export const lockedEndpoint = () =>
  new ApiError(
    "webhook_endpoint_locked",
    "An operator disabled this endpoint: only an operator can enable it or change its URL.",
  );

/**
 * The refusal an owner's change of `endpointId` (or a new endpoint's, with
 * none) meets, given the account's locked endpoints and the URL asked for in
 * its normal form; undefined when none.
 */
export function lockRefusal(
  locked: readonly { id: string; url: string }[],
  url: string,
  endpointId?: string,
): ApiError | undefined {
  const own = locked.find((endpoint) => endpoint.id === endpointId);
  if (own && normalWebhookUrl(own.url) !== url) return lockedEndpoint();
  if (locked.some((endpoint) => endpoint.id !== endpointId && normalWebhookUrl(endpoint.url) === url))
    return lockedUrl();
  return undefined;
}
