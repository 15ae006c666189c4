import { cors } from "hono/cors";
import { BOOKMARK_HEADER } from "../db/session";
import { RATE_LIMIT_HEADER_NAMES } from "../limiter/headers";

/** Headers browser code may read from responses (CONTRACT section 1). */
export const EXPOSED_HEADERS = [
  ...RATE_LIMIT_HEADER_NAMES,
  "Retry-After",
  "X-Request-Id",
  "ETag",
  "Deprecation",
  "Sunset",
  "Link",
  BOOKMARK_HEADER,
];

/**
 * A preflight is answered with the methods of the path it asks about.
 * Any origin may call: keys travel in a header, never in cookies, so there is
 * no ambient credential for another site to ride on. Preflights need no key.
 */
export function corsPolicy(allowedMethods: (path: string) => string[]) {
  return cors({
    origin: "*",
    allowMethods: (_origin, c) => allowedMethods(c.req.path),
    allowHeaders: ["Authorization", "Content-Type", "If-None-Match", BOOKMARK_HEADER],
    exposeHeaders: EXPOSED_HEADERS,
    maxAge: 86_400,
  });
}
