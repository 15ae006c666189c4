import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";

/**
 * Cloudflare's own `cf-ray` is the id operators can search for in the
 * dashboard, so it wins; a client-chosen id is never trusted.
 */
export function requestId(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const id = c.req.header("cf-ray") ?? crypto.randomUUID();
    c.set("requestId", id);
    c.header("X-Request-Id", id);
    await next();
  };
}
