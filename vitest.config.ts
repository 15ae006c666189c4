import { cloudflareTest, readD1Migrations } from "@cloudflare/vitest-plugin";
import { defineConfig } from "vitest/config";
import LongestFirst from "./test/support/longest-first.ts";

export default defineConfig(async () => {
  const migrations = await readD1Migrations("migrations");
  return {
    test: {
      // Every request writes a log line; show them only for tests that fail.
      silent: "passed-only",
      // The longest files first, with or without the durations vitest keeps from the run before (a clean clone has none).
      sequence: { sequencer: LongestFirst },
      projects: [
        {
          // Tests that run inside workerd against the real bindings.
          plugins: [
            cloudflareTest({
              main: "./src/app/worker.ts",
              wrangler: { configPath: "./wrangler.jsonc" },
              // The operator API is on in tests (README, "Operator API"); a test switches it off by leaving this out.
              // Lists read the version afresh (README, "Orders"): tests write through SQL and list at once, as
              // a client with a bookmark would; the tests of the reuse turn it on. FC_SEED replays a failed property (test/support/property-seed.ts).
              miniflare: {
                bindings: { TEST_MIGRATIONS: migrations, OPERATOR_TOKEN: "tests:operator-token-for-tests", WEBHOOK_SECRETS_KEY: "tests-webhook-sealing-key", CONSOLE_SESSION_KEY: "tests-console-session-key", ORDER_LIST_VERSION_REUSE_MS: "0", FC_SEED: process.env.FC_SEED ?? "" },
              },
            }),
          ],
          test: {
            name: "workers",
            restoreMocks: true,
            include: ["test/workers/**/*.test.ts"],
            // Both cores, a runtime each, and every file of a core in its runtime: a runtime per file loaded the app
            // into it again each time, half the project's CPU (CONTRIBUTING.md#tests). Each file starts as a new
            // isolate with empty storage (test/support/setup.ts).
            maxWorkers: 2,
            isolate: false,
            // No test here waits for the clock; the limit only catches a hang, and a busy machine (an npm start
            // serving traffic beside it) makes a test of many requests take longer than vitest's 5 s.
            testTimeout: 30_000,
            // And a hook's (each test's default key, a file's world) likewise: vitest's 10 s once ran out there.
            hookTimeout: 30_000,
            setupFiles: ["./test/support/setup.ts"],
            // hono, zod and jose prebundled: each file's runtime loads them as one module each, not hundreds (a fifth of the project's time; jose a tenth of the rest).
            // hono/route with hono, or its matchedRoutes reads a request symbol of a copy of its own.
            deps: { optimizer: { ssr: { enabled: true, include: ["hono", "hono/route", "zod", "@hono/zod-validator", "jose"] } } },
          },
        },
        {
          // Tests that run in Node without a service: pure logic of the scripts and the client, the simulation,
          // and tools that cannot run inside workerd (the OpenAPI validator compiles code at run time).
          test: {
            name: "node",
            restoreMocks: true,
            include: ["test/node/**/*.test.ts"],
            environment: "node",
            // Both cores: these files are independent (no shared service, temporary folders of their own).
            maxWorkers: 2,
            // And the files of a core share one process: a process per file imported wrangler, Miniflare and the
            // linters again each time (a quarter of the project's time). Each file starts with the environment the
            // process started with (test/support/node-setup.ts).
            isolate: false,
            setupFiles: ["./test/support/node-setup.ts"],
            testTimeout: 120_000,
            // A file's setup starts Miniflare or reads documents: on a busy machine, longer than vitest's 10 s.
            hookTimeout: 120_000,
          },
        },
        {
          // Tests of real processes on services of their own: `npm start` itself, stopped and started again. They
          // share nothing, so npm test runs them beside everything else, not in the e2e files' turn.
          test: {
            name: "e2e-own",
            restoreMocks: true,
            include: ["test/e2e/npm-start.test.ts"],
            environment: "node",
            // As the node project's, so that a plain `vitest run` may group the two (it refuses projects in one group
            // that allow different numbers of workers). npm test runs it in a vitest run of its own (scripts/test.ts).
            maxWorkers: 2,
            testTimeout: 120_000,
            hookTimeout: 240_000,
          },
        },
        {
          // Tests of real processes on one shared `npm start` (wrangler dev): the npm scripts, the client, a browser.
          test: {
            name: "e2e",
            restoreMocks: true,
            include: ["test/e2e/**/*.test.ts"],
            exclude: ["test/e2e/npm-start.test.ts"],
            environment: "node",
            globalSetup: ["./test/support/shared-service.ts"],
            // One at a time: most files share one npm start and assume no other file writes to it meanwhile (a smoke
            // check that changes nothing, a live tail that sees one change). npm test runs this project in a vitest run
            // of its own beside the others (scripts/test.ts): in one run, vitest puts it after them.
            fileParallelism: false,
            testTimeout: 120_000,
            hookTimeout: 240_000,
          },
        },
      ],
    },
  };
});
