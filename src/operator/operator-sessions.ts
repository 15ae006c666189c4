/**
 * Operators' console sessions (docs/operations.md#the-operators-console): the callers' console's rules on a cookie of
 * their own, sealed for another purpose so neither opens as the other, read only by the operator API's guard. Sign-out
 * and revoking the operator end sessions in rows read on the primary with each request, so they hold at once.
 */
import { z } from "zod";
import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import { ApiError } from "../framework/api-error";
import { callDependency } from "../lib/call-dependency";
import { openText, sealText } from "../lib/sealing";
import { sha256Hex } from "../lib/digest";
import { fromThisOrigin, refuseSignInFromAnotherSite } from "../console-kit/origin-checks";
import { SESSION_SECONDS, sessionCookie, sessionCookieOf, sessionKeyOf } from "../console-kit/session-cookie";
import { LINK_TOKEN } from "../console-kit/sign-in-links";
import type { TtlCache } from "../lib/ttl-cache";
import { PRUNE_OPERATOR_LINKS, REDEEM_OPERATOR_LINK } from "./operator-links";

/** The operators' cookie (`__Host-so_operator` over https). */
export const OPERATOR_COOKIE = "so_operator";
const PURPOSE = "store-orders operator sessions 1";
const ADDITIONAL_DATA = "operator session";
const SAFE_METHOD = /^(GET|HEAD|OPTIONS)$/;

export type OperatorSessionVia = "token" | "link";

/**
 * `bootstrap`: the SHA-256 of the OPERATOR_TOKEN token that opened it: the session lasts only while it is the secret's.
 */
const OperatorClaims = z.object({
  sid: z.string(),
  operator: z.string(),
  expiresAt: z.number(),
  bootstrap: z.string().optional(),
  linkedBy: z.string().optional(),
});
type OperatorClaims = z.infer<typeof OperatorClaims>;

export interface OperatorSession {
  id: string;
  expiresAt: string;
  /** Who made the link it was opened with, when another: the audit names them beside the operator. */
  linkedBy?: string;
}

/** `Set-Cookie` for an operator's session, or with no value one that ends it. */
export const operatorCookie = (requestUrl: string, value: string | undefined) =>
  sessionCookie(requestUrl, value, OPERATOR_COOKIE);

const endedError = (c: Context<AppEnv>, why: string) =>
  new ApiError("session_ended", `Your operator session has ended (${why}). Sign in again.`, {
    "Set-Cookie": operatorCookie(c.req.url, undefined),
  });

/** Whether a session's operator may act now: a named one live, or the bootstrap one while its token is the secret's. */
export interface OperatorLiveness {
  named(name: string): Promise<boolean>;
  /** The SHA-256 of the OPERATOR_TOKEN secret's token now. */
  bootstrapDigest(): Promise<string>;
}

/**
 * The operator a request's session cookie stands for, and the session; undefined for none. A session found ended goes
 * into `ended`, so the limiter stops counting its cookie as the operator.
 */
export async function operatorOfSession(
  c: Context<AppEnv>,
  live: OperatorLiveness,
  ended: TtlCache<string, true>,
): Promise<{ operator: string; session: OperatorSession } | undefined> {
  const sealed = sessionCookieOf(c.req.header("Cookie"), c.req.url, OPERATOR_COOKIE);
  if (sealed === undefined || !c.env.CONSOLE_SESSION_KEY) return undefined;
  if (!SAFE_METHOD.test(c.req.method) && !fromThisOrigin(c.req.raw, true)) {
    throw new ApiError("cross_site_request", "This request changes something, and came from another site: refused.");
  }
  const claims = await openClaims(c.env, sealed);
  if (!claims) throw endedError(c, "its cookie is not one this service sealed");
  if (claims.expiresAt <= Date.now()) throw endedError(c, "a session lasts 12 hours");
  const refuse = (why: string) => {
    ended.set(claims.sid, true, claims.expiresAt - Date.now(), Date.now());
    return endedError(c, why);
  };
  const row = await callDependency("D1", () =>
    c.env.DB.withSession("first-primary")
      .prepare("SELECT ended_at FROM operator_sessions WHERE id = ?1")
      .bind(claims.sid)
      .first<{ ended_at: string | null }>(),
  );
  if (!row || row.ended_at !== null) throw refuse("signed out");
  if (
    claims.bootstrap !== undefined
      ? claims.bootstrap !== (await live.bootstrapDigest())
      : !(await live.named(claims.operator))
  )
    throw refuse("its operator was revoked, or its token replaced");
  return {
    operator: claims.operator,
    session: {
      id: claims.sid,
      expiresAt: new Date(claims.expiresAt).toISOString(),
      ...(claims.linkedBy && { linkedBy: claims.linkedBy }),
    },
  };
}

/**
 * The operator a cookie stands for as the limiter sees it: sealed here, unexpired, not found ended. The seal alone, no
 * database: the guard says after the count whether the session is open.
 */
export async function sealedSessionOperator(
  c: Context<AppEnv>,
  ended: TtlCache<string, true>,
): Promise<string | undefined> {
  const sealed = sessionCookieOf(c.req.header("Cookie"), c.req.url, OPERATOR_COOKIE);
  if (sealed === undefined || !c.env.CONSOLE_SESSION_KEY) return undefined;
  const claims = await openClaims(c.env, sealed);
  return !claims || claims.expiresAt <= Date.now() || ended.get(claims.sid, Date.now()) ? undefined : claims.operator;
}

async function openClaims(env: Env, sealed: string): Promise<OperatorClaims | undefined> {
  try {
    return OperatorClaims.parse(JSON.parse(await openText(PURPOSE, sessionKeyOf(env), ADDITIONAL_DATA, sealed)));
  } catch {
    return undefined;
  }
}

/** Before an operator signs in: refused from another site, and where Cloudflare Access signs operators in. */
export function refuseOperatorSignIn(c: Context<AppEnv>): void {
  refuseSignInFromAnotherSite(c.req.raw);
  if (c.get("config").access)
    throw new ApiError(
      "not_found",
      "There are no operators' sessions here: Cloudflare Access signs operators in. Open the operators' console " +
        "through it.",
    );
}

/** Opens an operator's session, its row and cookie: `bootstrap`, the secret's token's; `linkedBy`, another's link's. */
export async function openOperatorSession(
  c: Context<AppEnv>,
  operator: string,
  via: OperatorSessionVia,
  { bootstrap, linkedBy }: { bootstrap?: string; linkedBy?: string } = {},
): Promise<{ cookie: string; session: OperatorSession }> {
  // Before anything is written: a deployment without the key has no sessions.
  const sealingKey = sessionKeyOf(c.env);
  const now = Date.now();
  const claims: OperatorClaims = {
    sid: crypto.randomUUID(),
    operator,
    expiresAt: now + SESSION_SECONDS * 1000,
    ...(bootstrap && { bootstrap }),
    ...(linkedBy && { linkedBy }),
  };
  const expiresAt = new Date(claims.expiresAt).toISOString();
  // As in the callers' console, a session this browser already had ends: a new sign-in replaces it.
  const previousCookie = sessionCookieOf(c.req.header("Cookie"), c.req.url, OPERATOR_COOKIE);
  const previous = previousCookie === undefined ? undefined : await openClaims(c.env, previousCookie);
  const db = c.env.DB;
  const at = new Date(now).toISOString();
  await callDependency("D1", () =>
    db.batch([
      db
        .prepare(
          "INSERT INTO operator_sessions (id, operator, via, created_at, expires_at) VALUES (?1, ?2, ?3, ?4, ?5)",
        )
        .bind(claims.sid, operator, via, at, expiresAt),
      ...(previous
        ? [
            db
              .prepare("UPDATE operator_sessions SET ended_at = ?2 WHERE id = ?1 AND ended_at IS NULL")
              .bind(previous.sid, at),
          ]
        : []),
    ]),
  );
  const sealed = await sealText(PURPOSE, sealingKey, ADDITIONAL_DATA, JSON.stringify(claims));
  return {
    cookie: operatorCookie(c.req.url, sealed),
    session: { id: claims.sid, expiresAt, ...(linkedBy && { linkedBy }) },
  };
}

/** Ends a session everywhere at once. */
export async function endOperatorSession(db: D1Database, sessionId: string): Promise<void> {
  await callDependency("D1", () =>
    db
      .prepare("UPDATE operator_sessions SET ended_at = ?2 WHERE id = ?1 AND ended_at IS NULL")
      .bind(sessionId, new Date().toISOString())
      .run(),
  );
}

/** Uses a link once; whom it was made for and by, or undefined for a token unknown, used or expired. */
export async function redeemOperatorLink(
  db: D1Database,
  token: string,
  now = Date.now(),
): Promise<{ operator: string; madeBy: string } | undefined> {
  if (!LINK_TOKEN.test(token)) return undefined;
  const at = new Date(now).toISOString();
  const hash = await sha256Hex(token);
  const row = await callDependency("D1", () =>
    db.prepare(REDEEM_OPERATOR_LINK).bind(hash, at).first<{ operator: string; created_by: string }>(),
  );
  return row === null ? undefined : { operator: row.operator, madeBy: row.created_by };
}

/** Sessions and links a day past their end (the cron). */
export async function pruneOperatorSessions(db: D1Database, now: number): Promise<void> {
  const before = new Date(now - 86_400_000).toISOString();
  await db.batch([
    db.prepare("DELETE FROM operator_sessions WHERE expires_at < ?1").bind(before),
    db.prepare(PRUNE_OPERATOR_LINKS).bind(before),
  ]);
}
