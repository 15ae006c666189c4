import { applyD1Migrations } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach } from "vitest";
import { storeDefaultKey } from "./test-keys";

// Setup files run before each test file; applied migrations are remembered, so this is cheap.
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

beforeEach(storeDefaultKey);
