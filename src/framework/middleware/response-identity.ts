import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../app-env";

// A ray id as Cloudflare writes it: 16 hex digits and, at the edge, the data centre.
const RAY_ID = /^[0-9a-f]{16}(?:-([A-Z]{3,4}))?$/;

/**
 * Names every response: its request id and the Worker version answering.
 * Cloudflare's own `cf-ray` is the id operators can search for in the
 * dashboard, so it wins; a client-chosen id is never trusted. The edge sets
 * cf-ray itself, but anything else in front of the worker (wrangler dev, a
 * proxy) may pass one through from the client, so only the ray format is
 * echoed into headers and logs.
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
    // The Worker version that answers (docs/operations.md#versions): during a gradual deployment two serve side
    // by side, and a smoke check verifies the one it meant is answering. Locally, whatever `wrangler dev` provides.
    const version = c.env?.CF_VERSION_METADATA?.id;
    if (version) c.header("X-Worker-Version", version);
    await next();
  };
}
