/**
 * Cursors clients hand back as given: base64url of fields and a check, a digest under the cursor's purpose, so a cursor
 * this API did not make is a 400, never a silent restart. Nothing in one is secret.
 */
import { urlSafe } from "./base64";
import { sha256Hex } from "./digest";

/** Every cursor is base64url of at most 200 characters; anything else is refused unread. */
export const CURSOR_PATTERN = "^[A-Za-z0-9_-]{1,200}$";
const CURSOR = new RegExp(CURSOR_PATTERN);

/** A digest under a cursor kind's purpose: its checks, and whatever else it binds itself to. */
export const cursorDigest = (purpose: string, text: string) => sha256Hex(`${purpose}\n${text}`, 9);

const base64url = (text: string) => urlSafe(btoa(text));
function fromBase64url(text: string): string | undefined {
  if (!CURSOR.test(text)) return undefined;
  try {
    return atob(text.replaceAll("-", "+").replaceAll("_", "/"));
  } catch {
    return undefined;
  }
}

/** A cursor of `purpose` carrying these fields (none may contain a dot). */
export async function makeCursor(purpose: string, fields: readonly string[]): Promise<string> {
  const payload = fields.join(".");
  return base64url(`${payload}.${await cursorDigest(purpose, payload)}`);
}

/** The fields of a cursor this API made for `purpose` with `count` fields; undefined for anything else. */
export async function readCursor(purpose: string, cursor: string, count: number): Promise<string[] | undefined> {
  const parts = fromBase64url(cursor)?.split(".");
  if (parts?.length !== count + 1) return undefined;
  const check = parts.pop()!;
  return check === (await cursorDigest(purpose, parts.join("."))) ? parts : undefined;
}
