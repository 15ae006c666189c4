/**
 * The console's session cookie (docs/api.md#the-console), sealed with the secret CONSOLE_SESSION_KEY so no one can make
 * or change one: the session's id, its key's id and account, its end; never the key.
 */
import { z } from "zod";
import { openText, sealText } from "../lib/sealing";

/**
 * `__Host-` over https, so no sibling subdomain can set or shadow it; browsers take that prefix only with `Secure`, so
 * plain http to this machine has the bare name.
 */
export const SESSION_COOKIE = "so_console";
/** A session cookie's name on this transport; the operators' console has a cookie of its own (`name`). */
export const sessionCookieName = (requestUrl: string, name = SESSION_COOKIE) =>
  plainLoopback(requestUrl) ? name : `__Host-${name}`;
/** A session lasts 12 hours from sign-in, at most: the key's revocation, expiry or the sign-out end it sooner. */
export const SESSION_SECONDS = 12 * 60 * 60;
const PURPOSE = "store-orders console sessions 1";
const ADDITIONAL_DATA = "console session";

export const SessionClaims = z.object({
  /** The session's id: its row in console_sessions, which sign-out ends. */
  sid: z.string(),
  keyId: z.string(),
  budget: z.string(),
  /** Unix ms. */
  expiresAt: z.number(),
});
export type SessionClaims = z.infer<typeof SessionClaims>;

/** The secret sessions are sealed with; without it there is no console sign-in. */
export function sessionKeyOf(env: Env): string {
  if (!env.CONSOLE_SESSION_KEY)
    throw new Error("CONSOLE_SESSION_KEY is not set: console sessions cannot be sealed or opened");
  return env.CONSOLE_SESSION_KEY;
}

export const sealSession = (keyMaterial: string, claims: SessionClaims): Promise<string> =>
  sealText(PURPOSE, keyMaterial, ADDITIONAL_DATA, JSON.stringify(claims));

/** A sealed cookie's claims; undefined for anything this key did not seal. */
export async function openSession(keyMaterial: string, sealed: string): Promise<SessionClaims | undefined> {
  try {
    return SessionClaims.parse(JSON.parse(await openText(PURPOSE, keyMaterial, ADDITIONAL_DATA, sealed)));
  } catch {
    return undefined;
  }
}

/** The session cookie's value in a Cookie header (by the name this transport uses), if any. */
export function sessionCookieOf(
  header: string | undefined,
  requestUrl: string,
  cookie = SESSION_COOKIE,
): string | undefined {
  if (!header) return undefined;
  const name = sessionCookieName(requestUrl, cookie);
  for (const pair of header.split(";")) {
    const at = pair.indexOf("=");
    if (at > 0 && pair.slice(0, at).trim() === name) return pair.slice(at + 1).trim();
  }
  return undefined;
}

const LOOPBACK = /^(localhost|127\.0\.0\.1|\[::1\])$/;

function plainLoopback(requestUrl: string): boolean {
  const url = new URL(requestUrl);
  return url.protocol === "http:" && LOOPBACK.test(url.hostname);
}

/** `Set-Cookie` for a session, or one ending it: Secure (but locally), HttpOnly, SameSite=Strict. */
export function sessionCookie(requestUrl: string, value: string | undefined, cookie = SESSION_COOKIE): string {
  const attributes = [
    "Path=/",
    "HttpOnly",
    "SameSite=Strict",
    `Max-Age=${value === undefined ? 0 : SESSION_SECONDS}`,
    ...(plainLoopback(requestUrl) ? [] : ["Secure"]),
  ];
  return [`${sessionCookieName(requestUrl, cookie)}=${value ?? ""}`, ...attributes].join("; ");
}
