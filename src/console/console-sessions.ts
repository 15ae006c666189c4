/**
 * Console sessions in D1 and as callers: a session's row (opened, ended),
 * and the credential identifyCaller() asks about requests that carry the
 * session cookie instead of a key (keys/identify-caller.ts).
 */
import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import { callDependency } from "../lib/call-dependency";
import { sessionEndedCaller, type Caller, type OtherCredential } from "../keys/identify-caller";
import { accountOf, type ApiKeyRecord } from "../account/key-record";
import { auditedKeyOperation } from "../keys/audited-key-operation";
import {
  openSession,
  sealSession,
  sessionCookie,
  sessionCookieOf,
  sessionKeyOf,
  SESSION_SECONDS,
} from "../console-kit/session-cookie";
import { fromThisOrigin } from "../console-kit/origin-checks";

export type SessionVia = "key" | "link";

const SAFE_METHOD = /^(GET|HEAD|OPTIONS)$/;

/** A session that has ended: 401, and its cookie cleared, so the browser stops sending it. */
const ended = (c: Context<AppEnv>, address: string, why: string): Caller =>
  sessionEndedCaller(address, why, sessionCookie(c.req.url, undefined));

/**
 * The caller a session cookie stands for: its key, of the account it was opened for, while the session is
 * neither expired nor signed out; whether the key stands is its account's to say, as for a key presented in a
 * header (account/rate-limit.ts). Writes must come from this origin.
 */
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
    const row = await callDependency("D1", () =>
      c.env.DB.prepare("SELECT ended_at FROM console_sessions WHERE id = ?1")
        .bind(claims.sid)
        .first<{ ended_at: string | null }>(),
    );
    if (!row || row.ended_at !== null) return ended(c, address, "signed out, or replaced by a newer sign-in");
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

/**
 * Opens a session for a key (audited, with how it was opened) and answers
 * with its cookie: 201 and the session as GET /v2/console/session shows it.
 * A session this browser already had ends: a new sign-in replaces it (the
 * console moving to a rotated key, or a link opened where someone was signed in).
 */
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
          db
            .prepare(
              "INSERT INTO console_sessions (id, key_id, budget, via, created_at, expires_at) VALUES (?1, " +
                "?2, ?3, ?4, " +
                "?5, ?6)",
            )
            .bind(claims.sid, key.id, claims.budget, via, new Date(now).toISOString(), expiresAt),
          ...(previous
            ? [
                db
                  .prepare("UPDATE console_sessions SET ended_at = ?2 WHERE id = ?1 AND ended_at IS NULL")
                  .bind(previous.sid, new Date(now).toISOString()),
              ]
            : []),
        ]),
      ),
  );
  return { cookie, expiresAt };
}

/**
 * Ends a session everywhere at once (its row), audited; the cookie that ends it in this browser is the caller's to
 * send.
 */
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
    () =>
      callDependency("D1", () =>
        db
          .prepare("UPDATE console_sessions SET ended_at = ?2 WHERE id = ?1 AND ended_at IS NULL")
          .bind(sessionId, at)
          .run(),
      ),
  );
}

/**
 * Ends every session of a key, and every link to it not yet used, at once (a key revoked as leaked):
 * the statements counted by what they ended.
 */
export async function endEverySessionOfKey(
  db: D1Database,
  keyId: string,
  at: string,
): Promise<{ sessions: number; links: number }> {
  const [sessions, links] = await db.batch([
    db.prepare("UPDATE console_sessions SET ended_at = ?2 WHERE key_id = ?1 AND ended_at IS NULL").bind(keyId, at),
    // A link is spent as its redemption spends it: no session can open from it any more.
    db.prepare("UPDATE console_links SET used_at = ?2 WHERE key_id = ?1 AND used_at IS NULL").bind(keyId, at),
  ]);
  return { sessions: sessions!.meta.changes, links: links!.meta.changes };
}

/** Rows a day past their end: sessions and links no one can use any more (the daily cron). */
export async function pruneConsoleSessions(db: D1Database, now: number): Promise<void> {
  const before = new Date(now - 86_400_000).toISOString();
  await db.batch([
    db.prepare("DELETE FROM console_sessions WHERE expires_at < ?1").bind(before),
    db.prepare("DELETE FROM console_links WHERE expires_at < ?1").bind(before),
  ]);
}
