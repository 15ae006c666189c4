import type { D1Migration } from "cloudflare:test";

declare global {
  namespace Cloudflare {
    interface Env {
      TEST_MIGRATIONS: D1Migration[];
      // A failed property's seed, to replay it (test/support/property-seed.ts); empty for a new one.
      FC_SEED: string;
    }
  }
}
