/**
 * An operator's lock as its owner meets it (docs/operations.md#webhooks): a locked endpoint cannot be enabled, deleted
 * or moved, no endpoint of its account may take its URL in any spelling, and none at all a locked host.
 */
import { ApiError } from "../../framework/api-error";

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

/** The refusal an owner's change meets, given the locked endpoints and the normal URL; undefined when none. */
export function lockRefusal(
  locked: readonly { id: string; url: string }[],
  url: string,
  endpointId?: string,
): ApiError | undefined {
  const own = locked.find((endpoint) => endpoint.id === endpointId);
  if (own && own.url !== url) return lockedEndpoint();
  if (locked.some((endpoint) => endpoint.id !== endpointId && endpoint.url === url)) return lockedUrl();
  return undefined;
}
