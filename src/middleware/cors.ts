import { cors } from "hono/cors";

/** Headers browser code may read from responses (CONTRACT section 1). */
export const EXPOSED_HEADERS = [
  "X-RateLimit-Limit",
  "X-RateLimit-Remaining",
  "X-RateLimit-Reset",
  "X-RateLimit-Resource",
  "RateLimit",
  "RateLimit-Policy",
  "Retry-After",
  "X-Request-Id",
  "ETag",
  "Deprecation",
  "Sunset",
  "Link",
];

/**
 * Any origin may call: keys travel in a header, never in cookies, so there is
 * no ambient credential for another site to ride on. Preflights need no key.
 */
export function corsPolicy() {
  return cors({
    origin: "*",
    allowMethods: ["GET", "HEAD", "DELETE", "OPTIONS"],
    allowHeaders: ["Authorization", "Content-Type", "If-None-Match"],
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: 86_400,
  });
}
