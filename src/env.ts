/**
 * The Hono environment of every handler. `Env` (the bindings) is generated
 * from wrangler.toml by `wrangler types` into worker-configuration.d.ts.
 */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
  };
}
