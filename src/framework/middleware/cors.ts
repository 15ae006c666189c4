import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "../app-env";
import { CLIENT_SENT, EXPOSED } from "../header-catalogue";

/**
 * Any origin may call: keys travel in a header, so no ambient credential rides along (the console's cookie is
 * SameSite=Strict and its writes check Origin). Preflights need no key and get the path's methods; a plain OPTIONS gets
 * `Allow`. Browsers may read every header the catalogue exposes.
 */
export function corsPolicy(
  allowedMethods: (path: string, env: Env) => string[] | undefined,
): MiddlewareHandler<AppEnv> {
  const preflight = cors({
    origin: "*",
    allowMethods: (_origin, c) => allowedMethods(c.req.path, c.env) ?? [],
    allowHeaders: ["Authorization", "Content-Type", ...CLIENT_SENT],
    exposeHeaders: EXPOSED,
    maxAge: 86_400,
  });
  const exposed = EXPOSED.join(",");
  return (c, next) => {
    if (c.req.method !== "OPTIONS" || c.req.header("Access-Control-Request-Method") === undefined) {
      // Set before the response exists, so no placeholder response is made (Hono's cors costs two more).
      c.header("Access-Control-Allow-Origin", "*");
      c.header("Access-Control-Expose-Headers", exposed);
      if (c.req.method !== "OPTIONS") return next();
      // A path no operation serves has nothing to allow: its 404 follows.
      const methods = allowedMethods(c.req.path, c.env);
      return methods?.length ? Promise.resolve(c.body(null, 204, { Allow: methods.join(", ") })) : next();
    }
    // A path this deployment lacks answers no preflight: its 404 follows.
    return allowedMethods(c.req.path, c.env) === undefined ? next() : preflight(c, next);
  };
}
