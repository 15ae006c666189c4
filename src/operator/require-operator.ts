import type { LeaseClient } from "../account/lease-client";
import type { Context, MiddlewareHandler } from "hono";
import type { AppEnv } from "../framework/app-env";
import { ApiError } from "../framework/api-error";
import { bearerToken } from "../keys/key-format";
import { sha256Hex } from "../lib/digest";
import { callDependency } from "../lib/call-dependency";
import { LIVE_OPERATOR_BY_DIGEST, LIVE_OPERATOR_BY_NAME } from "./operator-table";
import { operatorOfSession, sealedSessionOperator, type OperatorSession } from "./operator-sessions";
import { MISSING_KEY, type OtherCredential } from "../keys/caller";
import { SCANNER_ACTOR } from "../keys/audit";
import { fromThisOrigin } from "../console-kit/origin-checks";
import type { TtlCache } from "../lib/ttl-cache";
import { ACCESS_ASSERTION_HEADER, verifyAccessAssertion, type AccessKeys } from "./access-assertion";
import type { Config } from "../framework/read-config";

const CHALLENGE = 'Bearer realm="store-orders-operator"';
const ACCESS_CHALLENGE = 'CloudflareAccess realm="store-orders-operator"';
const SAFE_METHOD = /^(GET|HEAD|OPTIONS)$/;
/** How every named operator's token starts (`npm run keys -- operator add`). */
const NAMED_OPERATOR_TOKEN_PREFIX = "so_op_";

declare module "hono" {
  interface ContextVariableMap {
    /** Set by requireOperator(): the operator's name. */
    operator?: string;
    /** Set by requireOperator(): who the audit names: the operator, and who made their session's link if another. */
    operatorActor?: string;
    /** Set by requireOperator() when the operator came with a console session rather than a token or Access. */
    operatorSession?: OperatorSession;
    /** Set when the OPERATOR_TOKEN secret's token came: its SHA-256, which a session it opens is bound to. */
    bootstrapDigest?: string;
  }
}

/**
 * The operator API's guard. Where an Access application is named, Access's assertion, verified here, says who the
 * operator is, and no token stands in for it. Elsewhere, without an `OPERATOR_TOKEN` secret the API is 404; with one,
 * the request carries the secret's token, a live named operator's token, or the operators' console session cookie.
 * Tokens are compared by SHA-256. Sets the operator's name for the audit.
 */
export function requireOperator(
  accessKeys: AccessKeys,
  endedSessions: TtlCache<string, true>,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const access = c.get("config").access;
    if (access) {
      // Access's cookie rides along with any browser request, so a change must come from this origin or from no
      // browser.
      if (!SAFE_METHOD.test(c.req.method) && !fromThisOrigin(c.req.raw, false))
        throw new ApiError(
          "cross_site_request",
          "This request changes something, and came from another site: refused.",
        );
      c.set("operator", await accessOperator(c.req.header(ACCESS_ASSERTION_HEADER), access, accessKeys));
    } else {
      c.set("operator", await tokenOrSessionOperator(c, endedSessions));
    }
    const linkedBy = c.get("operatorSession")?.linkedBy;
    c.set("operatorActor", linkedBy ? `${c.get("operator")} (link by ${linkedBy})` : c.get("operator"));
    await next();
  };
}

/** How long a named operator's token is remembered live or unknown, unread: as a key's miss lasts. */
export const UNKNOWN_TOKEN_MS = 60_000;

/** What the credential remembers of named operators' tokens, by digest: live (true) or no live operator's (false). */
export type SeenOperatorTokens = TtlCache<string, boolean>;

/**
 * Who the operator is as the limiter counts them (docs/operations.md#operators-budgets), worked out before the count,
 * so each operator spends a budget of their own and never shares an office address's, or its ban. A credential that
 * fails stands for nobody: counted as without one, then refused by the guard.
 */
export const operatorCredential =
  (
    accessKeys: AccessKeys,
    endedSessions: TtlCache<string, true>,
    seenTokens: SeenOperatorTokens,
    leases: Pick<LeaseClient, "knowsRefused">,
  ): OtherCredential =>
  async (c, address) => {
    const refused = () => leases.knowsRefused(`ip:${address}`, Date.now());
    const operator = await identifiedOperator(c, accessKeys, endedSessions, seenTokens, refused).catch(() => undefined);
    return operator === undefined ? undefined : { kind: "anonymous", address, rejection: MISSING_KEY, operator };
  };

async function identifiedOperator(
  c: Context<AppEnv>,
  accessKeys: AccessKeys,
  endedSessions: TtlCache<string, true>,
  seenTokens: SeenOperatorTokens,
  addressRefused: () => boolean,
): Promise<string | undefined> {
  const access = c.get("config").access;
  if (access) {
    const verdict = await verifyAccessAssertion(c.req.header(ACCESS_ASSERTION_HEADER), access, accessKeys);
    return verdict.ok ? verdict.operator : undefined;
  }
  const configured = operatorToken(c.env);
  if (!configured) return undefined;
  const presented = bearerToken(c.req.header("Authorization"));
  if (presented === undefined)
    return c.req.header("Authorization") === undefined ? sealedSessionOperator(c, endedSessions) : undefined;
  const digest = await sha256Hex(presented);
  if (digest === (await sha256Hex(configured.token))) return configured.name;
  // Only a named operator's token not found unknown within the minute is looked up, and from an address group known
  // refused (limited or banned) only one found live: counted by address first, made-up tokens cost no read.
  if (!presented.startsWith(NAMED_OPERATOR_TOKEN_PREFIX)) return undefined;
  const seen = seenTokens.get(digest, Date.now());
  if (seen === false || (seen === undefined && addressRefused())) return undefined;
  const name = await liveOperator(c.env.DB, LIVE_OPERATOR_BY_DIGEST, digest);
  seenTokens.set(digest, name !== undefined, UNKNOWN_TOKEN_MS, Date.now());
  return name;
}

/** A token in the header, or else the operators' console session cookie (never the callers' cookie, never a key). */
async function tokenOrSessionOperator(c: Context<AppEnv>, endedSessions: TtlCache<string, true>): Promise<string> {
  const configured = operatorToken(c.env);
  if (!configured) throw new ApiError("not_found", "No such resource. See GET / for what this service offers.");
  const bootstrapDigest = () => sha256Hex(configured.token);
  if (c.req.header("Authorization") === undefined) {
    const live = {
      named: async (name: string) => (await liveOperator(c.env.DB, LIVE_OPERATOR_BY_NAME, name)) !== undefined,
      bootstrapDigest,
    };
    const signedIn = await operatorOfSession(c, live, endedSessions);
    if (signedIn) {
      c.set("operatorSession", signedIn.session);
      return signedIn.operator;
    }
  }
  const presented = bearerToken(c.req.header("Authorization"));
  if (!presented)
    throw new ApiError("missing_api_key", "Send an operator token as a bearer token.", {
      "WWW-Authenticate": CHALLENGE,
    });
  const digest = await sha256Hex(presented);
  if (digest === (await bootstrapDigest())) {
    c.set("bootstrapDigest", digest);
    return configured.name;
  }
  const name = await liveOperator(c.env.DB, LIVE_OPERATOR_BY_DIGEST, digest);
  if (name === undefined) {
    throw new ApiError("invalid_api_key", "The operator token is not valid: unknown, or its operator was revoked.", {
      "WWW-Authenticate": `${CHALLENGE}, error="invalid_token"`,
    });
  }
  return name;
}

async function accessOperator(
  assertion: string | undefined,
  access: NonNullable<Config["access"]>,
  keys: AccessKeys,
): Promise<string> {
  const verdict = await callDependency("Cloudflare Access's keys", () =>
    verifyAccessAssertion(assertion, access, keys),
  );
  // A 401 names how to authenticate (RFC 9110): here, through the Access application.
  if (!verdict.ok)
    throw new ApiError("invalid_access_assertion", `Refused by the operators' sign-in: ${verdict.reason}.`, {
      "WWW-Authenticate": ACCESS_CHALLENGE,
    });
  return verdict.operator;
}

/** The live operator a token's digest (or a name) names, from the primary, so a revocation holds at once. */
async function liveOperator(db: D1Database, statement: string, value: string): Promise<string | undefined> {
  const row = await callDependency("D1", () =>
    db.withSession("first-primary").prepare(statement).bind(value).first<{ name: string }>(),
  );
  return row?.name;
}

/** Whether the request carries the `OPERATOR_TOKEN` secret's own token (the bootstrap operator's), not a named one. */
export async function presentsBootstrapToken(c: Context<AppEnv>): Promise<boolean> {
  const configured = operatorToken(c.env);
  const presented = bearerToken(c.req.header("Authorization"));
  return (
    configured !== undefined &&
    presented !== undefined &&
    (await sha256Hex(presented)) === (await sha256Hex(configured.token))
  );
}

/** The `OPERATOR_TOKEN` secret, `<name>:<token>`; undefined when it is not set (or not of that form). */
function operatorToken(env: Env): { name: string; token: string } | undefined {
  const configured = env.OPERATOR_TOKEN;
  const separator = configured?.indexOf(":") ?? -1;
  return configured && separator >= 1
    ? { name: configured.slice(0, separator), token: configured.slice(separator + 1) }
    : undefined;
}

/** Whether audits name someone else by `name` already: the OPERATOR_TOKEN's holder, the scanner, or the fallback. */
export const actorNameTaken = (env: Env, name: string): boolean =>
  name === operatorToken(env)?.name || name === SCANNER_ACTOR || name === "operator";

/** The operator API exists only where its token is set or Access guards it; elsewhere it is 404. */
export const operatorApiAvailable = (env: Env, config: Config | undefined): boolean =>
  operatorToken(env) !== undefined || config?.access !== undefined;
