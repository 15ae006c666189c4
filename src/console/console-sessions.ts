/** Console sessions as callers: opened, ended, and the credential a session cookie is. */
import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import { callDependency } from "../lib/call-dependency";
import { sessionEndedCaller, type Caller, type OtherCredential } from "../keys/caller";
import { accountOf, type ApiKeyRecord } from "../account/key-record";
import { auditedKeyOperation } from "../keys/audit";
import {
  openSession,
  sealSession,
  sessionCookie,
  sessionCookieOf,
  sessionKeyOf,
  SESSION_SECONDS,
} from "../console-kit/session-cookie";
import { fromThisOrigin } from "../console-kit/origin-checks";
import { endSession, insertSession, isSessionOpen, type SessionVia } from "./session-table";

const SAFE_METHOD = /^(GET|HEAD|OPTIONS)$/;

/** A session that has ended: 401, and its cookie cleared, so the browser stops sending it. */
const ended = (c: Context<AppEnv>, address: string, why: string): Caller =>
  sessionEndedCaller(address, why, sessionCookie(c.req.url, undefined));

/** The caller a session cookie stands for: its key, while the session is open; writes from this origin. */
export function consoleSessionCredential(): OtherCredential {
  return async (c, address) => {
    const sealed = sessionCookieOf(c.req.header("Cookie"), c.req.url);
    // A deployment without the secret has no console: its cookies are not credentials (sign-in says why).
    if (sealed === undefined || !c.env.CONSOLE_SESSION_KEY) return undefined;
    if (!SAFE_METHOD.test(c.req.method) && !fromThisOrigin(c.req.raw, true)) {
      return {
        kind: "anonymous",
        address,
        rejection: {
          code: "cross_site_request",
          message: "This request changes something, and came from another site: refused.",
        },
      };
    }
    const now = Date.now();
    const claims = await openSession(sessionKeyOf(c.env), sealed);
    if (!claims) return ended(c, address, "its cookie is not one this service sealed");
    if (claims.expiresAt <= now) return ended(c, address, "a session lasts 12 hours");
    const open = await callDependency("D1", () => isSessionOpen(c.env.DB, claims.sid));
    if (!open) return ended(c, address, "signed out, or replaced by a newer sign-in");
    return {
      kind: "presented",
      keyId: claims.keyId,
      account: claims.budget,
      address,
      session: {
        id: claims.sid,
        expiresAt: new Date(claims.expiresAt).toISOString(),
        clearCookie: sessionCookie(c.req.url, undefined),
      },
    };
  };
}

/** Opens a session for a key (audited) and answers 201 with its cookie; a session this browser had ends. */
export async function openConsoleSession(
  c: Context<AppEnv>,
  key: ApiKeyRecord,
  via: SessionVia,
  auditChanges: Record<string, unknown> = {},
): Promise<{ cookie: string; expiresAt: string }> {
  const now = Date.now();
  const previousCookie = sessionCookieOf(c.req.header("Cookie"), c.req.url);
  const previous = previousCookie === undefined ? undefined : await openSession(sessionKeyOf(c.env), previousCookie);
  const claims = {
    sid: crypto.randomUUID(),
    keyId: key.id,
    budget: accountOf(key),
    expiresAt: now + SESSION_SECONDS * 1000,
  };
  const expiresAt = new Date(claims.expiresAt).toISOString();
  const cookie = sessionCookie(c.req.url, await sealSession(sessionKeyOf(c.env), claims));
  const db = c.env.DB;
  const replaced = previous && { replaced: previous.sid };
  await auditedKeyOperation(
    db,
    {
      operation: "console_sign_in",
      keyId: key.id,
      changes: { via, session: claims.sid, expiresAt, budget: claims.budget, ...replaced, ...auditChanges },
      actor: `key:${key.id}`,
    },
    () =>
      callDependency("D1", () =>
        db.batch([
          insertSession(db, {
            id: claims.sid,
            keyId: key.id,
            account: claims.budget,
            via,
            createdAt: new Date(now).toISOString(),
            expiresAt,
          }),
          ...(previous ? [endSession(db, previous.sid, new Date(now).toISOString())] : []),
        ]),
      ),
  );
  return { cookie, expiresAt };
}

/** Ends a session everywhere at once (its row), audited; the caller sends the clearing cookie. */
export async function endConsoleSession(c: Context<AppEnv>, key: ApiKeyRecord, sessionId: string): Promise<void> {
  const db = c.env.DB;
  const at = new Date().toISOString();
  await auditedKeyOperation(
    db,
    {
      operation: "console_sign_out",
      keyId: key.id,
      changes: { session: sessionId, budget: accountOf(key) },
      actor: `key:${key.id}`,
    },
    () => callDependency("D1", () => endSession(db, sessionId, at).run()),
  );
}
