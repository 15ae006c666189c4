import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";

/**
 * Names the Worker version that answers, on every response and in the
 * request log (docs/operations.md#versions): during a gradual deployment two
 * versions serve side by side, and the smoke check of a new one verifies it
 * is really the one answering. Locally it is whatever `wrangler dev` provides.
 */
export function workerVersion(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const id = c.env.CF_VERSION_METADATA?.id;
    if (id) c.header("X-Worker-Version", id);
    await next();
  };
}
