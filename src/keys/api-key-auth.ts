import type { MiddlewareHandler } from "hono";
import { findApiKey, type StoredKey } from "./lookup";
import type { TtlCache } from "../lib/ttl-cache";
import type { AppEnv, Caller } from "../framework/app-env";
import { ApiError } from "../framework/api-error";
import { parseBearer } from "./bearer";
import { scopesOf, type Scope } from "./api-key-record";
import { addressGroup } from "../lib/client-address";
import { logLine } from "../lib/log";

const CHALLENGE = 'Bearer realm="store-orders"';

/**
 * Works out who is calling without refusing anyone yet: the limiter runs
 * between this and requireApiKey(), so requests without a valid key are
 * counted (per address) before they get their 401 or 403.
 */
export function identifyCaller(apiKeys: TtlCache<string, StoredKey>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const address = addressGroup(c.req.header("CF-Connecting-IP"));
    const { caller, problems } = await callerOf(c.req.header("Authorization"), c.env.API_KEYS, apiKeys, address);
    // A record nobody can trust is a fault for operators to fix; the client is told only that the key is not valid.
    if (problems) logLine("error", c.get("requestId"), "an API key's record in KV does not fit the schema; the key is refused", { problems });
    c.set("caller", caller);
    await next();
  };
}

/**
 * Refuses callers without a valid key, with the reason identifyCaller()
 * found, and keys without the scope the operation needs (403, with the RFC
 * 6750 challenge naming the scope).
 */
export function requireApiKey(scope: Scope): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const caller = c.get("caller");
    if (caller.kind === "anonymous") throw caller.rejection;
    if (!scopesOf(caller.key).includes(scope)) {
      throw new ApiError("insufficient_scope", `This API key lacks the ${scope} scope this operation needs.`, {
        "WWW-Authenticate": `${CHALLENGE}, error="insufficient_scope", scope="${scope}"`,
      });
    }
    await next();
  };
}

async function callerOf(
  authorization: string | undefined,
  kv: KVNamespace,
  apiKeys: TtlCache<string, StoredKey>,
  address: string,
): Promise<{ caller: Caller; problems?: string }> {
  const bearer = parseBearer(authorization);
  if (bearer.kind === "missing") {
    const rejection = new ApiError("missing_api_key", 'Send your API key in the header "Authorization: Bearer <key>".', {
      "WWW-Authenticate": CHALLENGE,
    });
    return { caller: { kind: "anonymous", address, rejection } };
  }
  const found = bearer.kind === "token" ? await findApiKey(kv, bearer.token, apiKeys) : undefined;
  if (found?.kind === "invalid") return { caller: invalidCaller(address), problems: found.problems };
  const key = found?.kind === "found" ? found.record : undefined;
  const expired = key?.expiresAt !== undefined && Date.parse(key.expiresAt) <= Date.now();
  if (key && key.revokedAt === undefined && !expired) return { caller: { kind: "key", key, address } };
  // Malformed, unknown and revoked keys get the same answer: nothing here helps someone guessing keys. An
  // expired key says so, so its owner knows to ask for a new one rather than check for a typo.
  if (expired) return { caller: { kind: "anonymous", address, rejection: invalidKey(`The API key expired at ${key!.expiresAt}. Ask for a new one.`) } };
  return { caller: invalidCaller(address) };
}

/** A caller whose key is not valid (malformed, unknown, revoked): limited by its address, answered 401 where a key is needed. */
export function invalidCaller(address: string): Caller {
  return { kind: "anonymous", address, rejection: invalidKey(INVALID_KEY) };
}

const INVALID_KEY = "The API key is not valid. Check it, or ask for a new one.";

/** 401 invalid_api_key with the RFC 6750 challenge. */
function invalidKey(message: string): ApiError {
  return new ApiError("invalid_api_key", message, { "WWW-Authenticate": `${CHALLENGE}, error="invalid_token"` });
}
