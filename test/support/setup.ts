import { applyD1Migrations, reset } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, vi } from "vitest";
import { forgetIsolateMemory } from "../../src/app/isolate-memory";
import { seedProperties } from "./property-seed";
import { storeDefaultKey } from "./test-keys";

// Setup files run before each test file. The files of a core share one runtime (vitest.config.ts), so each
// starts as the first requests of a new isolate would: D1, KV, the caches and every object emptied, the
// isolate's memory forgotten, the real clock back, no global left stubbed by the file before, and its properties seeded
// (FC_SEED).
await reset();
forgetIsolateMemory();
vi.useRealTimers();
vi.unstubAllGlobals();
vi.restoreAllMocks();
seedProperties(env.FC_SEED);
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

beforeEach(storeDefaultKey);
