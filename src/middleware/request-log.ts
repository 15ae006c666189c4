import type { MiddlewareHandler } from "hono";
import type { AppEnv } from "../env";

/** One request as operators search for it in Workers Logs (docs/operations.md#logs). */
export interface RequestLogLine {
  level: "info" | "error";
  requestId: string;
  method: string;
  /** The operation's path template, so lines group by route rather than by id; null when nothing matched. */
  route: string | null;
  status: number;
  /** Wall time in ms. Workers only advance the clock across I/O, so this is time spent waiting, not CPU. */
  durationMs: number;
  keyId: string | null;
  plan: string | null;
  /** The Worker version that answered (docs/operations.md#versions); null where the runtime gives none. */
  versionId: string | null;
  /** What the limiter decided; null when it was not reached or did not answer. */
  limit: "admitted" | "limited" | "banned" | null;
  /** For 5xx: what went wrong inside, which the client is never told. */
  error?: string;
}

/**
 * Writes one JSON line per request once its response is known, errors
 * included (app.onError has already turned them into responses by then).
 * It names the key by its id only; the key itself never reaches a log.
 */
export function requestLog(): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const started = Date.now();
    await next();
    const caller = c.get("caller");
    const key = caller?.kind === "key" ? caller.key : undefined;
    const failure = c.get("failure");
    const line: RequestLogLine = {
      level: c.res.status >= 500 ? "error" : "info",
      requestId: c.get("requestId"),
      method: c.req.method,
      route: c.get("route") ?? null,
      status: c.res.status,
      durationMs: Date.now() - started,
      keyId: key?.id ?? null,
      plan: key?.plan ?? null,
      versionId: c.env?.CF_VERSION_METADATA?.id || null,
      limit: c.get("limit") ?? null,
      ...(failure === undefined ? {} : { error: failure }),
    };
    (line.level === "error" ? console.error : console.log)(JSON.stringify(line));
  };
}
