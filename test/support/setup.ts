import { applyD1Migrations, reset } from "cloudflare:test";
import { env } from "cloudflare:workers";
import { beforeEach, vi } from "vitest";
import { forgetIsolateMemory } from "../../src/app/isolate-memory";
import { seedProperties } from "./property-seed";
import { forgetDefaultKey } from "./test-keys";

// Setup files run before each test file. The files of a core share one runtime (vitest.config.ts), so each
// starts as the first requests of a new isolate would: D1, KV, the caches and every object emptied, the
// isolate's memory forgotten, the real clock back, no global left stubbed by the file before, and its properties seeded
// (FC_SEED).
await reset();
await emptyWhatResetLeft();
forgetIsolateMemory();
vi.useRealTimers();
vi.unstubAllGlobals();
vi.restoreAllMocks();
seedProperties(env.FC_SEED);
await applyD1Migrations(env.DB, env.TEST_MIGRATIONS);

beforeEach(forgetDefaultKey);

/**
 * What the file before left that reset() did not take away, taken away: now and then (one full run in a few) a file
 * met the previous file's D1 rows and its migrations recorded as applied, so its own were never applied to an empty
 * database. Every table, with its triggers and indexes, and every KV entry go; the migrations then start afresh.
 */
async function emptyWhatResetLeft(): Promise<void> {
  const { results } = await env.DB.prepare(
    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%' AND name NOT LIKE '_cf_%'",
  ).all<{ name: string }>();
  if (results.length > 0) await env.DB.batch(results.map(({ name }) => env.DB.prepare(`DROP TABLE "${name}"`)));
  for (let listed = await env.API_KEYS.list(); listed.keys.length > 0; listed = await env.API_KEYS.list())
    await Promise.all(listed.keys.map(({ name }) => env.API_KEYS.delete(name)));
}
