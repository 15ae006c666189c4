import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../framework/app-env";
import { ApiError } from "../framework/api-error";
import { bearerToken } from "../keys/bearer";
import { sha256Hex } from "../lib/digest";

const CHALLENGE = 'Bearer realm="store-orders-operator"';

declare module "hono" {
  interface ContextVariableMap {
    /** Set by requireOperator(): the operator token's name, for the audit. */
    operator?: string;
  }
}

/**
 * The operator API's guard. Without an `OPERATOR_TOKEN` secret the API does
 * not exist (404, like any unknown path). With one, the request must carry
 * its token as a bearer token: compared by SHA-256, so the comparison says
 * nothing about how close a guess was. Sets the operator's name, for the audit.
 */
export function requireOperator(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const configured = operatorToken(c.env);
    if (!configured) throw new ApiError("not_found", "No such resource. See GET / for what this service offers.");
    const presented = bearerToken(c.req.header("Authorization"));
    if (!presented) throw new ApiError("missing_api_key", "Send the operator token as a bearer token.", { "WWW-Authenticate": CHALLENGE });
    if ((await sha256Hex(presented)) !== (await sha256Hex(configured.token))) {
      throw new ApiError("invalid_api_key", "The operator token is not valid.", { "WWW-Authenticate": `${CHALLENGE}, error="invalid_token"` });
    }
    c.set("operator", configured.name);
    await next();
  };
}

/** The `OPERATOR_TOKEN` secret, `<name>:<token>`; undefined when it is not set (or not of that form). */
function operatorToken(env: Env): { name: string; token: string } | undefined {
  const configured = env.OPERATOR_TOKEN;
  const separator = configured?.indexOf(":") ?? -1;
  return configured && separator >= 1 ? { name: configured.slice(0, separator), token: configured.slice(separator + 1) } : undefined;
}

/** The operator API exists only where its token is set (docs/operations.md#operator-api): elsewhere every path of it is 404. */
export const operatorApiAvailable = (env: Env): boolean => operatorToken(env) !== undefined;
