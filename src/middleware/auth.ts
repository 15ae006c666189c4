import type { MiddlewareHandler } from "hono";
import { findApiKey } from "../keys/lookup";
import type { AppEnv, Caller } from "../env";
import { ApiError } from "../errors";
import { parseBearer } from "../keys/bearer";
import { addressGroup } from "../lib/client-address";

const CHALLENGE = 'Bearer realm="store-orders"';

/**
 * Works out who is calling without refusing anyone yet: the limiter runs
 * between this and requireApiKey(), so requests without a valid key are
 * counted (per address) before they get their 401.
 */
export function identifyCaller(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    c.set("caller", await callerOf(c.req.header("Authorization"), c.env.API_KEYS, c.req.header("CF-Connecting-IP")));
    await next();
  };
}

/** Refuses callers without a valid key, with the reason identifyCaller() found. */
export function requireApiKey(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const caller = c.get("caller");
    if (caller.kind === "anonymous") throw caller.rejection;
    await next();
  };
}

async function callerOf(authorization: string | undefined, kv: KVNamespace, ip: string | undefined): Promise<Caller> {
  const address = addressGroup(ip);
  const bearer = parseBearer(authorization);
  if (bearer.kind === "missing") {
    const rejection = new ApiError("missing_api_key", 'Send your API key in the header "Authorization: Bearer <key>".', {
      "WWW-Authenticate": CHALLENGE,
    });
    return { kind: "anonymous", address, rejection };
  }
  const key = bearer.kind === "token" ? await findApiKey(kv, bearer.token) : null;
  if (key && key.revokedAt === undefined) return { kind: "key", key };
  // Malformed, unknown and revoked keys get the same answer: nothing here helps someone guessing keys.
  const rejection = new ApiError("invalid_api_key", "The API key is not valid. Check it, or ask for a new one.", {
    "WWW-Authenticate": `${CHALLENGE}, error="invalid_token"`,
  });
  return { kind: "anonymous", address, rejection };
}
