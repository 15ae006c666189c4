import type { ApiError } from "./errors";
import type { ApiKeyRecord } from "./schemas/api-key";

/** Who is calling: a valid API key, or an address that did not present one (and why). */
export type Caller =
  | { kind: "key"; key: ApiKeyRecord }
  | { kind: "anonymous"; address: string; rejection: ApiError };

/**
 * The Hono environment of every handler. `Env` (the bindings) is generated
 * from wrangler.toml by `wrangler types` into worker-configuration.d.ts.
 */
export interface AppEnv {
  Bindings: Env;
  Variables: {
    requestId: string;
    caller: Caller;
  };
}
