import type { Context } from "hono";
import type { ContentfulStatusCode } from "hono/utils/http-status";

const encoder = new TextEncoder();

/**
 * Bodies written with their size counted for the analytics point: the runtime declares no length on a string body.
 * Encoded here, so counting costs no second pass; a streamed body sets `bodyBytes` when it ends.
 */
export function textBody(
  c: Context,
  text: string,
  status: ContentfulStatusCode,
  headers: Record<string, string>,
): Response {
  // A fresh encoding owns a plain ArrayBuffer; the type definitions only say ArrayBufferLike.
  const bytes = encoder.encode(text) as Uint8Array<ArrayBuffer>;
  c.set("bodyBytes", bytes.byteLength);
  return c.body(bytes, status, headers);
}

/** A JSON body, counted (textBody). */
export function jsonBody(
  c: Context,
  value: unknown,
  status: ContentfulStatusCode = 200,
  headers: Record<string, string> = {},
): Response {
  return textBody(c, JSON.stringify(value), status, { "Content-Type": "application/json", ...headers });
}

/** A page for people, counted: HTML under its CSP, never sniffed, sending no Referer. */
export function htmlBody(
  c: Context,
  html: string,
  contentSecurityPolicy: string,
  headers: Record<string, string> = {},
): Response {
  return textBody(c, html, 200, {
    "Content-Type": "text/html; charset=UTF-8",
    "Content-Security-Policy": contentSecurityPolicy,
    "X-Content-Type-Options": "nosniff",
    "Referrer-Policy": "no-referrer",
    ...headers,
  });
}
