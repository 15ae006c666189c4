import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../framework/app-env";
import { ApiError } from "../framework/api-error";
import { ANY_KEY, type KeyRequirement } from "../framework/operations/scopes";
import type { ApiKeyRecord } from "../account/key-record";
import { CHALLENGE } from "./caller";

/** Refuses callers without a valid key, and keys without the scope (403 with the RFC 6750 challenge). */
export function requireApiKey(scope: KeyRequirement): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const caller = c.get("caller");
    if (caller.kind === "anonymous")
      throw new ApiError(caller.rejection.code, caller.rejection.message, caller.rejection.headers);
    if (caller.kind === "presented") throw new Error("a key reached its guard unverified: rateLimit() must run first");
    if (scope !== ANY_KEY && !caller.key.scopes.includes(scope)) {
      throw new ApiError("insufficient_scope", `This API key lacks the ${scope} scope this operation needs.`, {
        "WWW-Authenticate": `${CHALLENGE}, error="insufficient_scope", scope="${scope}"`,
      });
    }
    await next();
  };
}

/** The calling key, in an operation behind a key's guard. */
export function keyOfCaller(c: Context<AppEnv>): ApiKeyRecord {
  const caller = c.get("caller");
  if (caller.kind !== "key") throw new Error("an operation that needs a key ran without one: its guard is missing");
  return caller.key;
}
