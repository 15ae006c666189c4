import type { MiddlewareHandler } from "hono";
import { cors } from "hono/cors";
import type { AppEnv } from "../app-env";
import { CLIENT_SENT, EXPOSED } from "../header-catalogue";

/**
 * Any origin may call: keys travel in a header, so there is no ambient
 * credential for another site to ride on. The console's session cookie is
 * one, but SameSite=Strict and sent without credentials mode by no other
 * site's script; its writes check Origin besides (docs/api.md#the-console). Preflights need no key,
 * and are answered with the methods of the path they ask about; so is a plain
 * OPTIONS (no Access-Control-Request-Method), with `Allow` as RFC 9110 has it.
 * Browser code may read every header the catalogue marks exposed
 * (docs/api.md#versioning-stability-and-deprecation).
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
      // What Hono's cors sets on every other request, set before the response exists so they join it as it is
      // made. Hot path: no response is made but the one sent (Hono's cors sets them on a placeholder, which costs
      // two more responses and their headers' copies; bench/HISTORY.md#why-issue-30s-targets-were-missed).
      c.header("Access-Control-Allow-Origin", "*");
      c.header("Access-Control-Expose-Headers", exposed);
      if (c.req.method !== "OPTIONS") return next();
      // A path no operation serves has nothing to allow: its 404 follows.
      const methods = allowedMethods(c.req.path, c.env);
      return methods?.length ? Promise.resolve(c.body(null, 204, { Allow: methods.join(", ") })) : next();
    }
    // A path that does not exist in this deployment (the operator API without its token) answers no preflight: its 404
    // follows.
    return allowedMethods(c.req.path, c.env) === undefined ? next() : preflight(c, next);
  };
}
