import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../framework/app-env";
import { ApiError } from "../framework/api-error";
import { bearerToken } from "../keys/bearer";
import { sha256Hex } from "../lib/digest";
import { callDependency } from "../lib/dependency";
import { LIVE_OPERATOR_BY_DIGEST } from "./operator-table";

const CHALLENGE = 'Bearer realm="store-orders-operator"';

declare module "hono" {
  interface ContextVariableMap {
    /** Set by requireOperator(): the operator token's name, for the audit. */
    operator?: string;
  }
}

/**
 * The operator API's guard. Without an `OPERATOR_TOKEN` secret the API does
 * not exist (404, like any unknown path). With one, the request must carry an
 * operator's token as a bearer token: the secret's own (the bootstrap
 * operator, named in it), or a named operator's from the operators' table
 * (`npm run keys -- operator add`), live when the request is read. Tokens are
 * compared by SHA-256, so no comparison says how close a guess was. Sets the
 * operator's name, which every audit row of the request's action carries.
 */
export function requireOperator(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const configured = operatorToken(c.env);
    if (!configured) throw new ApiError("not_found", "No such resource. See GET / for what this service offers.");
    const presented = bearerToken(c.req.header("Authorization"));
    if (!presented) throw new ApiError("missing_api_key", "Send an operator token as a bearer token.", { "WWW-Authenticate": CHALLENGE });
    const digest = await sha256Hex(presented);
    const name = digest === (await sha256Hex(configured.token)) ? configured.name : await liveOperatorNamed(c.env.DB, digest);
    if (name === undefined) {
      throw new ApiError("invalid_api_key", "The operator token is not valid: unknown, or its operator was revoked.", { "WWW-Authenticate": `${CHALLENGE}, error="invalid_token"` });
    }
    c.set("operator", name);
    await next();
  };
}

/**
 * The live operator whose token has this digest, read from the primary, so a
 * revocation holds from the moment it is written; undefined for none.
 */
async function liveOperatorNamed(db: D1Database, tokenDigest: string): Promise<string | undefined> {
  const row = await callDependency("D1", () => db.withSession("first-primary").prepare(LIVE_OPERATOR_BY_DIGEST).bind(tokenDigest).first<{ name: string }>());
  return row?.name;
}

/** The `OPERATOR_TOKEN` secret, `<name>:<token>`; undefined when it is not set (or not of that form). */
function operatorToken(env: Env): { name: string; token: string } | undefined {
  const configured = env.OPERATOR_TOKEN;
  const separator = configured?.indexOf(":") ?? -1;
  return configured && separator >= 1 ? { name: configured.slice(0, separator), token: configured.slice(separator + 1) } : undefined;
}

/** The operator API exists only where its token is set (docs/operations.md#operator-api): elsewhere every path of it is 404. */
export const operatorApiAvailable = (env: Env): boolean => operatorToken(env) !== undefined;
