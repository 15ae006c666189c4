import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";

// A ray id as Cloudflare writes it: 16 hex digits and, at the edge, the data centre.
const RAY_ID = /^[0-9a-f]{16}(?:-([A-Z]{3,4}))?$/;

/**
 * Names every response with its request id and Worker version. Cloudflare's `cf-ray` wins, as operators search by it;
 * only the ray format is echoed, since anything in front of the Worker may pass a client's through.
 */
export function responseIdentity(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const ray = c.req.header("cf-ray");
    const valid = ray === undefined ? null : RAY_ID.exec(ray);
    const id = valid ? ray! : crypto.randomUUID();
    c.set("requestId", id);
    // The data centre, for the analytics point: read from the ray, because request.cf is parsed from JSON on first use.
    if (valid?.[1]) c.set("colo", valid[1]);
    c.header("X-Request-Id", id);
    // The Worker version answering, so a smoke check in a gradual deployment knows which one it met.
    const version = c.env?.CF_VERSION_METADATA?.id;
    if (version) c.header("X-Worker-Version", version);
    await next();
  };
}
