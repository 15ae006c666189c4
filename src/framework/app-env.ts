import type { Config } from "./read-config";

/** The secrets, which `wrangler types` cannot see: merged into the Env it writes, global and `cloudflare:workers`'. */
interface Secrets {
  /**
   * A secret (locally in `operator.env`, made by `npm start`): `<name>:<token>`; without it there is no operator API.
   */
  OPERATOR_TOKEN?: string;
  /**
   * A secret: what webhook signing secrets are sealed with in D1; no webhooks without it (docs/operations.md#webhooks).
   */
  WEBHOOK_SECRETS_KEY?: string;
  /** A secret: what console session cookies are sealed with; no console without it (docs/operations.md#the-console). */
  CONSOLE_SESSION_KEY?: string;
  /** A secret: an API token that reads Account Analytics, for the traffic view (docs/operations.md#traffic). */
  ANALYTICS_READ_TOKEN?: string;
}

declare global {
  interface Env extends Secrets {}
  namespace Cloudflare {
    interface Env extends Secrets {}
  }
}

/**
 * The Hono environment of every handler. `Env` comes from `wrangler types`; a feature's middleware declares its
 * variables in Hono's ContextVariableMap beside itself, as Hono's own do.
 */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    /** Set by responseIdentity() from the ray id: the Cloudflare data centre that answered; none locally. */
    colo?: string;
    /** Set by loadConfig(): the vars, parsed and checked. */
    config: Config;
    /** Set by mountRoutes(): the matched operation's path template, for the request log. */
    route?: string;
    /** Set by handleError() for 5xx: the internal cause, for the request log only. */
    failure?: string;
    /** The body's size, or a promise of it while it streams, for the analytics point (counted-body.ts). */
    bodyBytes?: number | Promise<number>;
  };
}
