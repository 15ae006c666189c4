import type { MiddlewareHandler } from "hono";
import { readConfig, type ConfigResult } from "../read-config";
import type { AppEnv } from "../app-env";
import { ApiError } from "../api-error";

/** The config of these bindings, parsed on first use and then kept for the isolate's life (isolate-memory.ts). */
export function configOf(env: Env, parsed: WeakMap<Env, ConfigResult>): ConfigResult {
  let result = parsed.get(env);
  if (!result) {
    result = readConfig(Object.fromEntries(Object.entries(env)));
    parsed.set(env, result);
  }
  return result;
}

/** Puts the parsed vars on the context; with an invalid one the worker answers 503 rather than guess. */
export function loadConfig(parsed: WeakMap<Env, ConfigResult>): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const result = configOf(c.env, parsed);
    if (!result.ok) {
      throw new ApiError(
        "service_unavailable",
        "The service is temporarily unavailable (configuration). Retry shortly.",
        { "Retry-After": "60" },
        new Error(`invalid configuration: ${result.problems.join("; ")}`),
      );
    }
    c.set("config", result.config);
    await next();
  };
}
