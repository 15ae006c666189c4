import { vi } from "vitest";
import { seedProperties } from "./property-seed";

// Setup files run before each test file. The node project's files of a worker share one process (vitest.config.ts),
// so each starts as in a process of its own: the environment variables the process started with (a file that
// points STORE_ORDERS_WRANGLER at the fake must not leave it pointed there), the real clock, no mock or stub.
const holder = globalThis as { startingEnvironment?: Record<string, string | undefined> };
const starting = (holder.startingEnvironment ??= { ...process.env });
for (const name of Object.keys(process.env)) if (!(name in starting)) delete process.env[name];
Object.assign(process.env, starting);
vi.useRealTimers();
vi.unstubAllGlobals();
vi.unstubAllEnvs();
vi.restoreAllMocks();
seedProperties(process.env.FC_SEED);
