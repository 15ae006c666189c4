import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "../env";
import { CLIENT_SENT, EXPOSED } from "../header-catalogue";

/**
 * Any origin may call: keys travel in a header, never in cookies, so there is
 * no ambient credential for another site to ride on. Preflights need no key,
 * and are answered with the methods of the path they ask about. Browser code
 * may read every header the catalogue marks exposed (docs/api.md#versioning-stability-and-deprecation).
 */
export function corsPolicy(allowedMethods: (path: string, env: Env) => string[] | undefined): MiddlewareHandler<AppEnv> {
  const policy = cors({
    origin: "*",
    allowMethods: (_origin, c) => allowedMethods(c.req.path, c.env) ?? [],
    allowHeaders: ["Authorization", "Content-Type", ...CLIENT_SENT],
    exposeHeaders: EXPOSED,
    maxAge: 86_400,
  });
  // A path that does not exist in this deployment (the operator API without its token) answers no preflight: its 404 follows.
  return (c, next) => (c.req.method === "OPTIONS" && allowedMethods(c.req.path, c.env) === undefined ? next() : policy(c, next));
}
