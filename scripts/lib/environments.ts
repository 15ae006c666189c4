import { unstable_readConfig } from "wrangler";
import { readConfig } from "../../src/framework/read-config";

export const DEPLOYED_ENVIRONMENTS = ["staging", "production"] as const;
export type DeployedEnvironment = (typeof DEPLOYED_ENVIRONMENTS)[number];

/** What this project needs from one environment of wrangler.jsonc. */
export interface EnvironmentConfig {
  name: string;
  vars: Record<string, unknown>;
  routes: string[];
  d1: { binding: string; database_name?: string; database_id?: string }[];
  kv: { binding: string; id?: string }[];
  durableObjects: { name: string; class_name: string }[];
  /** Workers Logs and traces, each on with every environment's sampling rate. */
  observability: { logs: boolean; traces: boolean };
  crons: string[];
  analyticsDatasets: { binding: string; dataset?: string }[];
  compatibilityFlags: string[];
}

/** Flags every environment runs with: fetch() only to public addresses (docs/operations.md#webhooks). */
export const REQUIRED_COMPATIBILITY_FLAGS = ["global_fetch_strictly_public"];

/** The domains the committed configuration names until an operator puts their own (reserved, never a zone). */
const EXAMPLE_DOMAIN = /\.example\.(com|net|org)(\/|$)/;

export function isDeployedEnvironment(name: string): name is DeployedEnvironment {
  return (DEPLOYED_ENVIRONMENTS as readonly string[]).includes(name);
}

/** The top level (local development) when `env` is undefined; another wrangler.jsonc with `config`. */
export function readEnvironment(env: DeployedEnvironment | undefined, config = "wrangler.jsonc"): EnvironmentConfig {
  const resolved = unstable_readConfig({ config, env }, { hideWarnings: true });
  return {
    name: resolved.name ?? "",
    vars: resolved.vars,
    routes: (resolved.routes ?? []).map((route: string | { pattern: string }) =>
      typeof route === "string" ? route : route.pattern,
    ),
    d1: resolved.d1_databases,
    kv: resolved.kv_namespaces,
    durableObjects: resolved.durable_objects.bindings,
    observability: {
      logs: resolved.observability?.enabled === true && resolved.observability.logs?.enabled !== false,
      traces: resolved.observability?.traces?.enabled === true,
    },
    crons: resolved.triggers?.crons ?? [],
    analyticsDatasets: resolved.analytics_engine_datasets,
    compatibilityFlags: resolved.compatibility_flags,
  };
}

/**
 * The cron that prunes the order events a batch at a time and wakes a dispatcher whose alarm was lost
 * (docs/design/order-events.md#retention).
 */
export const PIPELINE_CRON = "* * * * *";

/**
 * What the event pipeline needs of an environment: its cron every minute
 * (the prune keeps up with a busy store only in small, frequent runs) and
 * each endpoint's lane.
 */
export function webhookPipelineProblems(label: string, config: EnvironmentConfig): string[] {
  const problems: string[] = [];
  if (!config.crons.includes(PIPELINE_CRON))
    problems.push(
      `${label}: the triggers' crons lack "${PIPELINE_CRON}", which prunes the order events and wakes the webhook ` +
        `dispatcher`,
    );
  if (
    !config.durableObjects.some((binding) => binding.name === "WEBHOOK_LANES" && binding.class_name === "WebhookLane")
  )
    problems.push(`${label}: the WEBHOOK_LANES Durable Object binding (class WebhookLane) is missing`);
  return problems;
}

/**
 * Why a deployed environment would not work like the local one. Wrangler does
 * not inherit bindings or vars, so a name added at the top level and forgotten
 * in an environment would only show up as a failure in that deployment.
 */
export function configProblems(
  env: DeployedEnvironment,
  config: EnvironmentConfig,
  local: EnvironmentConfig,
): string[] {
  const problems = missingFromConfig(env, config, local);

  // The vars' own rules (src/framework/read-config.ts) are checked for every environment by varProblems(); deployments
  // also need https.
  const baseUrl = config.vars.BASE_URL;
  if (typeof baseUrl !== "string" || !baseUrl.startsWith("https://")) {
    problems.push(`${env}: BASE_URL must be an https URL, got ${JSON.stringify(baseUrl)}`);
  }
  if (!config.observability.logs) problems.push(`${env}: env.${env}.observability must have its logs on`);
  if (!config.observability.traces) problems.push(`${env}: env.${env}.observability.traces.enabled must be true`);
  // The prune of order events (docs/design/order-events.md#retention): without it they grow until the database stops.
  for (const cron of local.crons)
    if (!config.crons.includes(cron)) problems.push(`${env}: env.${env}.triggers.crons lacks "${cron}"`);
  if (config.name === local.name) problems.push(`${env}: name must differ from the local worker's "${local.name}"`);
  problems.push(...webhookPipelineProblems(env, config));
  for (const flag of REQUIRED_COMPATIBILITY_FLAGS)
    if (!config.compatibilityFlags.includes(flag)) problems.push(`${env}: compatibility_flags lacks "${flag}"`);
  // The operators' traffic view reads the dataset the worker writes (docs/operations.md#traffic).
  const written = config.analyticsDatasets.find((binding) => binding.binding === "REQUESTS")?.dataset;
  if (config.vars.ANALYTICS_DATASET !== written)
    problems.push(
      `${env}: ANALYTICS_DATASET must name the REQUESTS binding's dataset "${written}", got ` +
        `${JSON.stringify(config.vars.ANALYTICS_DATASET)}`,
    );
  return problems;
}

/**
 * The vars the worker would refuse to run with (src/framework/read-config.ts), each naming the environment (`label`)
 * and the var.
 */
export function varProblems(label: string, config: EnvironmentConfig): string[] {
  const result = readConfig(config.vars);
  return result.ok ? [] : result.problems.map((problem) => `${label}: ${problem}`);
}

/** Every var and binding of the local worker that `config` (named `label` in messages) lacks. */
export function missingFromConfig(label: string, config: EnvironmentConfig, local: EnvironmentConfig): string[] {
  const problems: string[] = [];
  const missing = (kind: string, wanted: string[], present: string[]) => {
    for (const name of wanted.filter((n) => !present.includes(n)))
      problems.push(`${label}: ${kind} "${name}" is missing`);
  };
  missing("var", Object.keys(local.vars), Object.keys(config.vars));
  missing("D1 binding", bindingNames(local.d1), bindingNames(config.d1));
  missing("KV binding", bindingNames(local.kv), bindingNames(config.kv));
  missing(
    "Durable Object binding",
    local.durableObjects.map((b) => b.name),
    config.durableObjects.map((b) => b.name),
  );
  return problems;
}

/** What still names an example domain: the routes and base URLs an operator replaces with their own first. */
export function exampleDomainsIn(config: EnvironmentConfig): string[] {
  const urls = ["BASE_URL", "STAGING_BASE_URL", "PRODUCTION_BASE_URL"].map((name) => ({
    what: name,
    value: String(config.vars[name]),
  }));
  return [...config.routes.map((route) => ({ what: `route ${route}`, value: route })), ...urls]
    .filter(({ value }) => EXAMPLE_DOMAIN.test(value))
    .map(({ what }) => what);
}

function bindingNames(bindings: { binding: string }[]): string[] {
  return bindings.map((b) => b.binding);
}

/**
 * The vars wrangler.jsonc declares that the environment sets, as `wrangler dev`'s
 * `--var NAME:value` arguments: `SECRET_SCANNING_KEYS_URL=http://127.0.0.1:9000/keys npm start`
 * points the local service at a key server of its own. Names the file does not
 * declare are left alone, so nothing else in a shell's environment reaches the worker.
 */
export function varsFromEnvironment(
  declared: readonly string[],
  environment: Record<string, string | undefined>,
): string[] {
  return declared.flatMap((name) => (environment[name] === undefined ? [] : ["--var", `${name}:${environment[name]}`]));
}
