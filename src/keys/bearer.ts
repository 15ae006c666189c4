import { isWellFormedKey } from "./key-format";

const BEARER = /^bearer(?: +(.*))?$/is;

type BearerToken = { kind: "missing" } | { kind: "malformed" } | { kind: "token"; token: string };

/**
 * The token of `Authorization: Bearer <token>`, or undefined when there is
 * none. The scheme is case-insensitive (RFC 9110); a scheme with no token sent
 * no token.
 */
export function bearerToken(header: string | undefined): string | undefined {
  return (header === undefined ? undefined : BEARER.exec(header)?.[1]) || undefined;
}

/**
 * Reads an API key from `Authorization: Bearer <key>` strictly. The token
 * must be in this service's key format (docs/api.md#key-format), a strict
 * subset of RFC 6750's b64token, its checksum right when it has one, so
 * garbage and mistyped keys are refused without a KV read. Two Authorization
 * headers arrive joined by ", " and so fail the format.
 */
export function parseBearer(header: string | undefined): BearerToken {
  const token = bearerToken(header);
  if (!token) return { kind: "missing" };
  return isWellFormedKey(token) ? { kind: "token", token } : { kind: "malformed" };
}
