import { cors } from "hono/cors";
import { CLIENT_SENT, EXPOSED } from "../header-catalogue";

/**
 * Any origin may call: keys travel in a header, never in cookies, so there is
 * no ambient credential for another site to ride on. Preflights need no key,
 * and are answered with the methods of the path they ask about. Browser code
 * may read every header the catalogue marks exposed (docs/api.md#versioning-stability-and-deprecation).
 */
export function corsPolicy(allowedMethods: (path: string) => string[]) {
  return cors({
    origin: "*",
    allowMethods: (_origin, c) => allowedMethods(c.req.path),
    allowHeaders: ["Authorization", "Content-Type", ...CLIENT_SENT],
    exposeHeaders: EXPOSED,
    maxAge: 86_400,
  });
}
