import type { Config } from "./read-config";

/** The secrets, which `wrangler types` cannot see: merged into the Env it writes, global and `cloudflare:workers`'. */
interface Secrets {
  /**
   * A secret, not a var (`wrangler secret put OPERATOR_TOKEN`; locally `operator.env` beside the state, made by
   * `npm start`): `<name>:<token>`. The operator API is off without it (docs/operations.md#operator-api).
   */
  OPERATOR_TOKEN?: string;
  /**
   * A secret (`wrangler secret put WEBHOOK_SECRETS_KEY`; locally in `operator.env`, made by `npm start`): what
   * webhook signing secrets are sealed with in D1. Webhook endpoints cannot be made or delivered to without it
   * (docs/operations.md#webhooks).
   */
  WEBHOOK_SECRETS_KEY?: string;
  /**
   * A secret (`wrangler secret put CONSOLE_SESSION_KEY`; locally in `operator.env`, made by `npm start`): what the
   * console's session cookies are sealed with. The console cannot sign anyone in without it
   * (docs/operations.md#the-console).
   */
  CONSOLE_SESSION_KEY?: string;
  /**
   * A secret (`wrangler secret put ANALYTICS_READ_TOKEN`): an API token that may read Account Analytics, with which
   * the operators' traffic view queries the request analytics (docs/operations.md#traffic).
   */
  ANALYTICS_READ_TOKEN?: string;
}

declare global {
  interface Env extends Secrets {}
  namespace Cloudflare {
    interface Env extends Secrets {}
  }
}

/**
 * The Hono environment of every handler. `Env` (the bindings) is generated
 * from wrangler.jsonc by `wrangler types` into worker-configuration.d.ts. The
 * variables here are the framework's; a feature's middleware declares the
 * ones it sets in Hono's ContextVariableMap beside itself, as Hono's own do.
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
    /**
     * Set by what writes the body (counted-body.ts): its size, or when it streams, its size once it has ended; for the
     * analytics point.
     */
    bodyBytes?: number | Promise<number>;
  };
}
