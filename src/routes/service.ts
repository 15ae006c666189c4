import type { Context } from "hono";
import type { AppEnv } from "../env";
import type { Operation } from "./operation";

/** `GET /`: what this service is and where its operations live. */
export function describeService(operations: readonly Operation[]) {
  return (c: Context<AppEnv>) =>
    c.json({
      name: "Store Orders",
      version: "1.0.0",
      baseUrl: c.get("config").baseUrl,
      operations: operations.map(({ operationId, method, path, stability }) => ({
        operationId,
        method: method.toUpperCase(),
        path: `/v1${path}`,
        stability,
      })),
    });
}
