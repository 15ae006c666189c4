/**
 * Single-use sign-in links an operator hands a key's holder (docs/operations.md#the-console), as Svix hands out its
 * portal: 15 minutes, one session. The token travels in the fragment, which no request log sees; D1 keeps its SHA-256.
 */
import { sha256Hex } from "../lib/digest";
import { base64, urlSafe } from "../lib/base64";
import { z } from "zod";
import { callDependency } from "../lib/call-dependency";

export const LINK_SECONDS = 15 * 60;

/** The token's form: 32 random bytes, base64url. */
export const LINK_TOKEN = /^[A-Za-z0-9_-]{43}$/;

/** A new link's token and its row; the token is shown to the operator once. */
export async function createConsoleLink(
  db: D1Database,
  keyId: string,
  createdBy: string,
  now = Date.now(),
): Promise<{ token: string; expiresAt: string }> {
  const token = urlSafe(base64(crypto.getRandomValues(new Uint8Array(32))));
  const expiresAt = new Date(now + LINK_SECONDS * 1000).toISOString();
  const hash = await sha256Hex(token);
  await callDependency("D1", () =>
    db
      .prepare(
        "INSERT INTO console_links (token_hash, key_id, created_at, expires_at, created_by) VALUES (?1, ?2, ?3, ?4, " +
          "?5)",
      )
      .bind(hash, keyId, new Date(now).toISOString(), expiresAt, createdBy)
      .run(),
  );
  return { token, expiresAt };
}

/**
 * Uses a link in one guarded UPDATE, so only one of two tries gets the key; undefined when unknown, used or expired.
 */
export async function redeemConsoleLink(
  db: D1Database,
  token: string,
  now = Date.now(),
): Promise<{ keyId: string; createdBy: string } | undefined> {
  const hash = await sha256Hex(token);
  const at = new Date(now).toISOString();
  const row = await callDependency("D1", () =>
    db
      .prepare(
        "UPDATE console_links SET used_at = ?2 WHERE token_hash = ?1 AND used_at IS NULL AND expires_at > ?2 " +
          "RETURNING key_id, created_by",
      )
      .bind(hash, at)
      .first<{ key_id: string; created_by: string }>(),
  );
  return row ? { keyId: row.key_id, createdBy: row.created_by } : undefined;
}

/** A new link as the operator API answers it. */
export const ConsoleLink = z
  .object({
    keyId: z.string(),
    url: z.string().describe("The console with the single-use token in its fragment; hand it to the key's holder"),
    expiresAt: z.string(),
  })
  .meta({ id: "ConsoleLink" });

/** Links a day past their end (the daily cron). */
export const pruneLinks = (db: D1Database, before: string): D1PreparedStatement =>
  db.prepare("DELETE FROM console_links WHERE expires_at < ?1").bind(before);
