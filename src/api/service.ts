import type { Context } from "hono";
import type { AppEnv } from "../env";
import { SERVICE, VERSION_PREFIX } from "../service";
import type { Operation } from "./operation";

/** `GET /`: what this service is and where its operations live. */
export function describeService(operations: readonly Operation[]) {
  return (c: Context<AppEnv>) =>
    c.json({
      ...SERVICE,
      baseUrl: c.get("config").baseUrl,
      operations: operations.map(({ operationId, method, path, stability }) => ({
        operationId,
        method: method.toUpperCase(),
        path: VERSION_PREFIX + path,
        stability,
      })),
    });
}
