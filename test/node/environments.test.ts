import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import {
  DEPLOYED_ENVIRONMENTS,
  configProblems,
  exampleDomainsIn,
  readEnvironment,
  varProblems,
  varsFromEnvironment,
  webhookPipelineProblems,
  type EnvironmentConfig,
} from "../../scripts/lib/environments";
import { runNpmScript } from "../support/npm-script";

const local = readEnvironment(undefined);

function staging(overrides: Partial<EnvironmentConfig> = {}): EnvironmentConfig {
  return { ...readEnvironment("staging"), ...overrides };
}

describe("wrangler.jsonc environments", () => {
  // That the committed wrangler.jsonc passes is checked by `npm run check:config`, which `npm test` runs first;
  // these tests check that the checks catch what they should.
  it("gives each deployment its own database, namespace, worker name and base URL", () => {
    const [a, b] = DEPLOYED_ENVIRONMENTS.map((env) => readEnvironment(env));
    expect(a!.name).not.toBe(b!.name);
    expect(a!.d1[0]!.database_name).not.toBe(b!.d1[0]!.database_name);
    // Neither names an id: each Worker's first release provisions its own (docs/operations.md#the-first-release).
    for (const env of [a!, b!]) expect([env.d1[0]!.database_id, env.kv[0]!.id]).toEqual([undefined, undefined]);
    expect(a!.vars.BASE_URL).not.toBe(b!.vars.BASE_URL);
  });

  it("reports a var or binding left out of an environment", () => {
    const { BAN_SECONDS: _, ...vars } = staging().vars;
    expect(configProblems("staging", staging({ vars, kv: [] }), local)).toEqual([
      'staging: var "BAN_SECONDS" is missing',
      'staging: KV binding "API_KEYS" is missing',
    ]);
  });

  it("reports an environment whose cron is not every minute, or without the webhook lanes", () => {
    expect(local.crons).toEqual(["* * * * *"]);
    expect(configProblems("staging", staging({ crons: ["17 3 * * *"] }), local)).toEqual([
      'staging: env.staging.triggers.crons lacks "* * * * *"',
      'staging: the triggers\' crons lack "* * * * *", which prunes the order events and wakes the webhook dispatcher',
    ]);
    const withoutLanes = staging().durableObjects.filter((binding) => binding.name !== "WEBHOOK_LANES");
    expect(webhookPipelineProblems("staging", staging({ durableObjects: withoutLanes }))).toEqual([
      "staging: the WEBHOOK_LANES Durable Object binding (class WebhookLane) is missing",
    ]);
  });

  it("reports a deployed BASE_URL that is not https", () => {
    const BASE_URL = "http://store-orders.example.com/v1";
    const problems = configProblems("staging", staging({ vars: { ...staging().vars, BASE_URL } }), local);
    expect(problems).toEqual([`staging: BASE_URL must be an https URL, got "${BASE_URL}"`]);
  });

  it.each(["https://store-orders.example.com", "https://x.example.com/v1/", "store-orders.example.com/v1"])(
    "reports BASE_URL %s as the var the worker would refuse",
    (BASE_URL) => {
      expect(varProblems("staging", staging({ vars: { ...staging().vars, BASE_URL } }))).toEqual([
        `staging: BASE_URL must be an http(s) URL ending in /v1, got "${BASE_URL}"`,
      ]);
    },
  );

  it.each([
    [{ BAN_THRESHOLD: "2O" }, 'staging: BAN_THRESHOLD must be a positive whole number, got "2O"'],
    [{ BAN_SECONDS: "0" }, 'staging: BAN_SECONDS must be a positive whole number, got "0"'],
    [{ BAN_SECONDS: "-900" }, 'staging: BAN_SECONDS must be a positive whole number, got "-900"'],
    [{ PETS_SUNSET_AT: "next June" }, 'staging: PETS_SUNSET_AT must be an ISO 8601 date or date-time, got "next June"'],
    [
      { PETS_SUNSET_AT: "2026-01-01" },
      'staging: PETS_SUNSET_AT must be later than PETS_DEPRECATED_AT, got "2026-01-01"',
    ],
    [{ STAGING_BASE_URL: undefined }, "staging: STAGING_BASE_URL is missing"],
    [
      { ACCESS_TEAM_DOMAIN: "store-ops.cloudflareaccess.com" },
      "staging: ACCESS_AUD and ACCESS_TEAM_DOMAIN go together: set both to put the operators' side behind Cloudflare " +
        "Access, or neither",
    ],
    [
      { ACCESS_TEAM_DOMAIN: "https://store-ops.cloudflareaccess.com", ACCESS_AUD: "f".repeat(64) },
      "staging: ACCESS_TEAM_DOMAIN must be your Access team's domain, <team>.cloudflareaccess.com, " +
        'got "https://store-ops.cloudflareaccess.com"',
    ],
    [
      { WEBHOOK_FAILING_AFTER: "86400", WEBHOOK_DISABLE_AFTER: "86400" },
      "staging: WEBHOOK_FAILING_AFTER must be shorter than WEBHOOK_DISABLE_AFTER: an endpoint's owner is told it " +
        'fails before it is disabled, got "86400"',
    ],
    [
      { WEBHOOK_DISABLE_AFTER: "5d" },
      'staging: WEBHOOK_DISABLE_AFTER must be a whole number of seconds, 1 or more, got "5d"',
    ],
  ])("reports %j", (override, problem) => {
    expect(varProblems("staging", staging({ vars: { ...staging().vars, ...override } }))).toEqual([problem]);
  });

  it("lets a failing endpoint's periods be shorter than a day outside production only", () => {
    const short = { WEBHOOK_FAILING_AFTER: "10", WEBHOOK_DISABLE_AFTER: "60" };
    expect(varProblems("local", { ...local, vars: { ...local.vars, ...short } })).toEqual([]);
    expect(varProblems("staging", staging({ vars: { ...staging().vars, ...short } }))).toEqual([]);
    const production = readEnvironment("production");
    expect(varProblems("production", { ...production, vars: { ...production.vars, ...short } })).toEqual([
      'production: WEBHOOK_FAILING_AFTER must be at least 86400 (a day) in production, got "10"',
      'production: WEBHOOK_DISABLE_AFTER must be at least 86400 (a day) in production, got "60"',
    ]);
  });

  it("reports logs or traces switched off and a worker name shared with local", () => {
    const off = { logs: false, traces: false };
    expect(configProblems("staging", staging({ observability: off, name: local.name }), local)).toEqual([
      "staging: env.staging.observability must have its logs on",
      "staging: env.staging.observability.traces.enabled must be true",
      `staging: name must differ from the local worker's "${local.name}"`,
    ]);
  });

  it("runs every environment with fetch() to public addresses only, and reports one without it", () => {
    for (const env of [undefined, ...DEPLOYED_ENVIRONMENTS])
      expect(readEnvironment(env).compatibilityFlags).toContain("global_fetch_strictly_public");
    expect(configProblems("staging", staging({ compatibilityFlags: [] }), local)).toEqual([
      'staging: compatibility_flags lacks "global_fetch_strictly_public"',
    ]);
  });

  it("has the traffic view read the dataset each environment writes, and reports one that names another", () => {
    for (const env of DEPLOYED_ENVIRONMENTS) expect(configProblems(env, readEnvironment(env), local)).toEqual([]);
    expect(
      configProblems(
        "staging",
        staging({ vars: { ...staging().vars, ANALYTICS_DATASET: "store_orders_requests_production" } }),
        local,
      ),
    ).toEqual([
      'staging: ANALYTICS_DATASET must name the REQUESTS binding\'s dataset "store_orders_requests_staging", ' +
        'got "store_orders_requests_production"',
    ]);
  });

  it("lists where an environment still names the example domains, and nothing once it names its own", () => {
    expect(exampleDomainsIn(staging())).toEqual([
      "route store-orders-staging.example.com",
      "BASE_URL",
      "STAGING_BASE_URL",
      "PRODUCTION_BASE_URL",
    ]);
    const own = (url: string) => url.replace(".example.com", ".acme-store.dev");
    const vars = Object.fromEntries(Object.entries(staging().vars).map(([name, value]) => [name, own(String(value))]));
    expect(exampleDomainsIn(staging({ routes: [own("store-orders-staging.example.com")], vars }))).toEqual([]);
  });
});

describe("npm run check's configuration step", () => {
  const dir = mkdtempSync(join(tmpdir(), "store-orders-config-"));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  /** wrangler.jsonc with its relative paths made absolute, so a copy elsewhere still builds. */
  function configCopy(edit: (config: string) => string): string {
    const config = readFileSync("wrangler.jsonc", "utf8")
      .replace('"node_modules/wrangler/config-schema.json"', `"${resolve("node_modules/wrangler/config-schema.json")}"`)
      .replace('"main": "src/app/worker.ts"', `"main": "${resolve("src/app/worker.ts")}"`)
      .replaceAll('"migrations_dir": "migrations"', `"migrations_dir": "${resolve("migrations")}"`)
      .replace('"directory": "./public"', `"directory": "${resolve("public")}"`);
    const path = join(dir, `wrangler-${Math.random().toString(36).slice(2)}.jsonc`);
    writeFileSync(path, edit(config));
    return path;
  }

  /** `config` with the first match of `find` after `after` replaced. */
  const editAfter = (config: string, after: string, find: RegExp, replacement: string) => {
    const at = config.indexOf(after);
    return config.slice(0, at) + config.slice(at).replace(find, replacement);
  };

  // One run for both environments: each fails on its own fault, and on nothing of the other's; neither is built.
  it("fails, naming the environment and what is wrong in each: production without its Durable Object binding, staging with a BAN_THRESHOLD that is not a number", async () => {
    const broken = configCopy((config) =>
      editAfter(
        editAfter(config, '"production": {', /"durable_objects": \{\s*"bindings": \[[^\]]*\]\s*\},/, ""),
        '"staging": {',
        /"BAN_THRESHOLD": "20"/,
        '"BAN_THRESHOLD": "2O"',
      ),
    );
    const result = await runNpmScript("check:config", broken);
    const failures = (env: string) => result.stderr.split("\n").filter((line) => line.startsWith(`FAIL ${env}:`));
    expect(failures("staging")).toEqual([
      'FAIL staging: BAN_THRESHOLD must be a positive whole number, got "2O"',
      "FAIL staging: not built until the above is fixed",
    ]);
    expect(failures("production")).toContain('FAIL production: Durable Object binding "ACCOUNTS" is missing');
    expect(failures("production").join("\n")).not.toContain("BAN_THRESHOLD");
    expect(result.stdout).toContain("ok   local: vars valid");
    expect(result.status).toBe(1);
  });
});

describe("npm run deploy:*", () => {
  it.each(DEPLOYED_ENVIRONMENTS)(
    "refuses to deploy %s while it names the example domains, before calling wrangler",
    async (env) => {
      const result = await runNpmScript(`deploy:${env}`);
      expect(result.stderr).toContain(
        `Not deploying ${env}: wrangler.jsonc still names the example domains in route store-orders` +
          `${env === "staging" ? "-staging" : ""}.example.com, BASE_URL, STAGING_BASE_URL, PRODUCTION_BASE_URL.`,
      );
      expect(result.stdout).not.toContain("Applying D1 migrations");
      expect(result.status).toBe(1);
    },
  );
});

describe("npm start's vars from its environment", () => {
  const declared = Object.keys(readEnvironment(undefined).vars);

  it("passes every var wrangler.jsonc declares that the environment sets, as wrangler dev's --var, and nothing else", () => {
    expect(declared).toContain("SECRET_SCANNING_KEYS_URL");
    const args = varsFromEnvironment(declared, {
      SECRET_SCANNING_KEYS_URL: "http://127.0.0.1:9000/keys",
      WEBHOOK_RETRY_SECONDS: "1",
      HOME: "/root",
      PATH: "/bin",
    });
    const pairs = args.filter((_, index) => index % 2 === 1);
    expect(args.filter((_, index) => index % 2 === 0).every((flag) => flag === "--var")).toBe(true);
    expect(pairs.sort()).toEqual(["SECRET_SCANNING_KEYS_URL:http://127.0.0.1:9000/keys", "WEBHOOK_RETRY_SECONDS:1"]);
  });
});
