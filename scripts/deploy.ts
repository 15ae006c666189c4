/**
 * `npm run deploy:staging` / `npm run deploy:production`: a gradual release
 * (docs/operations.md#promotion-staging-smoke-production). D1 migrations first
 * (they only add, so old and new code both run on the new schema); the new
 * version uploaded, tagged with the commit; deployed at 0%; smoke-checked
 * against that version only; then ramped (10%, 50%, 100% by default) with a
 * smoke check between steps, and at each step that splits traffic a health
 * gate: the new version against the previous one on the step's real
 * traffic, from the request analytics (docs/operations.md#promotion-by-health).
 * Any failure, or an interruption (SIGINT,
 * SIGTERM), puts 100% back on the version that was serving and exits 1 with
 * one line saying what failed and what was restored. `--all-at-once` (a
 * change to the Durable Object classes) deploys tagged too, and smoke-checks
 * that version. The first release of an environment provisions its database,
 * namespace and classes with an upload that serves nothing, migrates, and
 * only then deploys (docs/operations.md#the-first-release). `--dry-run` makes
 * the same pre-flight checks (reading what is deployed), then prints every
 * command and runs none.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { enableReadReplication } from "./lib/d1-replication";
import { exampleDomainsIn, isDeployedEnvironment, readEnvironment } from "./lib/environments";
import {
  DEFAULT_THRESHOLDS,
  healthQuery,
  judgeHealth,
  readHealthAnswer,
  type HealthThresholds,
} from "./lib/health-gate";
import { CLOUDFLARE_API, runAnalyticsSql, type AnalyticsAccess } from "../src/lib/cloudflare-api";
import {
  CONFIG_FILES,
  DEFAULT_STEPS,
  deployVersions,
  durableObjectLifecycle,
  parseSteps,
  split,
} from "./lib/release-plan";
import { describeResults, runSmokeChecks, type SmokeTarget } from "./lib/smoke-checks";
import { wranglerProcesses, type Wrangler } from "./lib/wrangler";

/** The secrets a deployment cannot work without: webhooks and the consoles' sign-in (docs/operations.md#secrets). */
export const REQUIRED_SECRETS = ["WEBHOOK_SECRETS_KEY", "CONSOLE_SESSION_KEY"];
/** Secrets a first release passes on when the operator has them: the operator API and the traffic view. */
const OPTIONAL_SECRETS = ["OPERATOR_TOKEN", "ANALYTICS_READ_TOKEN"];

const USAGE = `Usage: npm run deploy:<staging|production> -- [--key <API key for the smoke checks>]
       [--steps 10,50,100] [--wait 60] [--base-url https://host/v1] [--all-at-once]
       [--compare-migrations-with <commit>] [--first-release] [--dry-run] [--no-health-gate] [--min-requests 100]
       [--error-ratio-factor 2] [--error-ratio-floor 0.5] [--p99-factor 1.5] [--p99-slack 50]
The health gate reads CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN (and CLOUDFLARE_API_BASE_URL, as wrangler does).
A first release takes the secrets from this environment: ${REQUIRED_SECRETS.join(", ")}, and ${OPTIONAL_SECRETS.join(
  ", ",
)} if set.`;

class Refused extends Error {}

/** A commit as the release tags its versions: the full id, which is all `git show` is ever given. */
const COMMIT = /^[0-9a-f]{40}$/;

function options(argv: string[]) {
  const { values, positionals } = parseArgs({
    args: argv,
    allowPositionals: true,
    options: {
      key: { type: "string" },
      steps: { type: "string", default: DEFAULT_STEPS.join(",") },
      wait: { type: "string", default: "60" },
      "base-url": { type: "string" },
      "propagation-wait": { type: "string", default: "3" },
      "all-at-once": { type: "boolean", default: false },
      "first-release": { type: "boolean", default: false },
      "compare-migrations-with": { type: "string" },
      "dry-run": { type: "boolean", default: false },
      "no-health-gate": { type: "boolean", default: false },
      "min-requests": { type: "string", default: String(DEFAULT_THRESHOLDS.minRequests) },
      "error-ratio-factor": { type: "string", default: String(DEFAULT_THRESHOLDS.errorRatioFactor) },
      "error-ratio-floor": { type: "string", default: String(DEFAULT_THRESHOLDS.errorRatioFloor * 100) },
      "p99-factor": { type: "string", default: String(DEFAULT_THRESHOLDS.p99Factor) },
      "p99-slack": { type: "string", default: String(DEFAULT_THRESHOLDS.p99SlackMs) },
    },
  });
  const env = positionals[0] ?? "";
  if (!isDeployedEnvironment(env))
    throw new Refused(`usage: the environment must be staging or production (got "${env}")\n${USAGE}`);
  const steps = parseSteps(values.steps);
  if (!steps)
    throw new Refused(
      `--steps takes rising whole percentages ending at 100, such as 10,50,100 (got "${values.steps}")`,
    );
  const wait = Number(values.wait);
  const propagationWait = Number(values["propagation-wait"]);
  if (!(wait >= 0) || !(propagationWait >= 0)) throw new Refused("--wait and --propagation-wait take seconds");
  const compareWith = values["compare-migrations-with"];
  if (compareWith !== undefined && !/^[0-9a-f]{7,40}$/.test(compareWith))
    throw new Refused(`--compare-migrations-with takes a commit id (hex), such as 3f9a1c2b7d4e (got "${compareWith}")`);
  const thresholds = thresholdsFrom(values);
  return {
    env,
    steps,
    thresholds,
    healthGate: !values["no-health-gate"],
    wait,
    propagationWait,
    key: values.key ?? process.env.SMOKE_API_KEY,
    baseUrl: values["base-url"],
    allAtOnce: values["all-at-once"],
    firstRelease: values["first-release"],
    compareWith,
    dryRun: values["dry-run"],
  };
}

/** The health gate's thresholds from their options: numbers, each at least 0 (the floor is a percentage). */
function thresholdsFrom(values: Record<string, string | boolean | undefined>): HealthThresholds {
  const read = (name: string) => {
    const value = Number(values[name]);
    if (!(value >= 0) || String(values[name]).trim() === "")
      throw new Refused(`--${name} takes a number of at least 0 (got "${values[name]}")`);
    return value;
  };
  return {
    minRequests: read("min-requests"),
    errorRatioFactor: read("error-ratio-factor"),
    errorRatioFloor: read("error-ratio-floor") / 100,
    p99Factor: read("p99-factor"),
    p99SlackMs: read("p99-slack"),
  };
}

/** Waits, unless the release is interrupted first. */
const sleep = (seconds: number, signal: AbortSignal) =>
  new Promise<void>((resolve, reject) => {
    if (signal.aborted) return reject(signal.reason);
    const timer = setTimeout(resolve, seconds * 1000);
    signal.addEventListener(
      "abort",
      () => {
        clearTimeout(timer);
        reject(signal.reason);
      },
      { once: true },
    );
  });

/** Where a release runs (the project's folder) and where it reports. */
export interface DeployContext {
  cwd: string;
  out(line: string): void;
  err(line: string): void;
  /** Where SIGINT and SIGTERM come from: the process, unless a test stands in for it. */
  signals?: Pick<NodeJS.EventEmitter, "on" | "off">;
  /** How wrangler runs: a process per call, unless a test stands in for it. */
  wrangler?: Wrangler;
}

/** Runs one release and returns its exit code: 0, or 1 with one line saying what failed (and what was restored). */
export async function runDeploy(argv: string[], context: DeployContext): Promise<number> {
  try {
    await release(argv, context);
    return 0;
  } catch (error) {
    context.err(
      error instanceof Refused
        ? error.message
        : `FAILED: ${error instanceof Error ? error.message : String(error)}. Nothing was deployed.`,
    );
    return 1;
  }
}

type Git = (...args: string[]) => string;

/** What the pre-flight established: the options, the environment, what serves now, and whether the release may ramp. */
interface ReleaseFacts extends ReturnType<typeof options> {
  worker: string;
  commit: string;
  subject: string;
  smokeBase: string;
  /** The version serving 100% now; undefined before the environment's first release. */
  current: { id: string; tag: string | undefined } | undefined;
  migrationsChanged: boolean;
  /** A first release: the D1 database's name, and whether read replication is turned on once it exists. */
  first?: { database: string; replication?: AnalyticsAccess };
  /** Set when each ramp step is judged by the health gate: where it reads the request analytics. */
  gate?: { access: AnalyticsAccess; dataset: string };
}

/**
 * Everything a release checks before it changes anything; a dry run makes the same checks. Refuses with the reason and
 * what to do.
 */
function preflight(
  argv: string[],
  cwd: string,
  git: Git,
  wrangler: Wrangler,
  out: (line: string) => void,
): ReleaseFacts {
  const chosen = options(argv);
  const { env, healthGate, key, baseUrl, allAtOnce, compareWith, dryRun, firstRelease } = chosen;
  const configPath = join(cwd, CONFIG_FILES[0]);
  const config = readEnvironment(env, configPath);
  const examples = exampleDomainsIn(config);
  if (examples.length > 0) {
    throw new Refused(
      `Not deploying ${env}: wrangler.jsonc still names the example domains in ${examples.join(", ")}. Put your ` +
        `own domain there first (docs/operations.md#environments).`,
    );
  }
  if (git("status", "--porcelain") !== "")
    throw new Refused(`Not deploying ${env}: the working tree has uncommitted changes; a release is one commit.`);
  if (!key && !dryRun && !firstRelease)
    throw new Refused(`Not deploying ${env}: the smoke checks need an API key of ${env} (--key, or SMOKE_API_KEY).`);

  // What serves now, and the commit it was released from: read in a dry run too, so it refuses what a release would.
  const current = currentVersion(env, wrangler);
  // Wrangler says the same of a Worker that is not there and of one looked for in the wrong account or under another
  // name: a first release is only ever the operator's word, never inferred.
  if (current === undefined && !firstRelease)
    throw new Refused(
      `Not deploying ${env}: wrangler finds no deployment of ${config.name} in this account. If this is its first ` +
        `release (or finishes one that stopped), run it again with --first-release; otherwise check ` +
        `CLOUDFLARE_ACCOUNT_ID and the name in wrangler.jsonc.`,
    );
  if (current !== undefined && firstRelease)
    throw new Refused(`Not deploying ${env}: --first-release, but ${config.name} serves ${current.id} already.`);
  // The gate compares versions on a split: a release that ramps needs it, or the operator's word that it goes without.
  const gated = healthGate && !allAtOnce && current !== undefined;
  const access = gated ? analyticsAccess(env) : undefined;
  const dataset = config.analyticsDatasets.find((binding) => binding.binding === "REQUESTS")?.dataset;
  if (gated && !dataset)
    throw new Refused(
      `Not deploying ${env} gradually: wrangler.jsonc has no REQUESTS analytics dataset for ${env}, which the health ` +
        `gate reads.`,
    );

  const worker = config.name;
  const commit = git("rev-parse", "HEAD");
  const subject = git("log", "-1", "--format=%s");
  const smokeBase = (baseUrl ?? String(config.vars.BASE_URL)).replace(/\/+$/, "");

  const missing = missingSecrets(env, current !== undefined, wrangler);
  if (missing.length > 0)
    throw new Refused(
      current === undefined
        ? `Not deploying ${env}: a first release takes its secrets from this environment, and ${missing.join(", ")} ` +
            `${missing.length > 1 ? "are" : "is"} not set (docs/operations.md#secrets).`
        : `Not deploying ${env}: the Worker lacks the secret${missing.length > 1 ? "s" : ""} ${missing.join(", ")}; ` +
            `set ${missing.length > 1 ? "them" : "it"} with \`npx wrangler secret put <NAME> --env ${env}\` ` +
            `(docs/operations.md#secrets).`,
    );
  const facts = { ...chosen, worker, commit, subject, smokeBase, current };
  if (current === undefined) {
    out(`Releasing ${commit.slice(0, 12)} ("${subject}") to ${env} (${worker}): its first release.`);
    const database = config.d1.find((binding) => binding.binding === "DB")?.database_name;
    if (!database) throw new Refused(`Not deploying ${env}: its DB binding names no database_name to provision.`);
    const replication = env === "production" ? replicationAccess(env) : undefined;
    return { ...facts, migrationsChanged: true, first: { database, ...(replication && { replication }) } };
  }
  out(
    `Releasing ${commit.slice(0, 12)} ("${subject}") to ${env} (${worker}); serving now: ${current.id}` +
      `${current.tag ? ` (commit ${current.tag.slice(0, 12)})` : " (no commit tag)"}.`,
  );
  const baseline = current.tag ?? (compareWith && resolveCommit(git, compareWith));
  const migrationsChanged = baseline === undefined || !sameLifecycle(git, baseline, env, configPath);
  if (migrationsChanged && !allAtOnce) {
    throw new Refused(
      baseline === undefined
        ? `Not deploying ${env} gradually: the serving version has no commit tag (it was not released by this ` +
            `script), so its Durable Object classes cannot be compared. ` +
            `Name the commit it was deployed from with --compare-migrations-with <commit>, or check the release and ` +
            `run it with --all-at-once.`
        : `Not deploying ${env} gradually: the Durable Object classes in wrangler.jsonc changed since the deployed ` +
            `version (commit ${baseline.slice(0, 12)}), and two versions that declare different ones cannot split ` +
            `traffic. ` +
            `Check the release, then run it again with --all-at-once (wrangler deploy, tagged, then the same smoke ` +
            `checks).`,
    );
  }
  return { ...facts, current, migrationsChanged, ...(access && dataset && { gate: { access, dataset } }) };
}

/**
 * The release's steps, each printed as it runs; in a dry run printed and not run. Each stops at `signal` (an
 * interruption).
 */
class ReleaseSteps {
  constructor(
    private readonly facts: ReleaseFacts,
    private readonly run: Wrangler,
    private readonly out: (line: string) => void,
    private readonly signal: AbortSignal,
  ) {}

  /** A wrangler call as the plan prints it. */
  wrangler(title: string, args: string[], stepEnv: Record<string, string> = {}): void {
    this.out(`== ${title}: wrangler ${args.join(" ")}`);
    if (this.facts.dryRun) return;
    if (this.signal.aborted) throw this.signal.reason;
    const status = this.run.inTerminal(args, stepEnv);
    if (status !== 0) throw new Error(`${title} failed (wrangler exit ${status})`);
  }

  /**
   * A wrangler step that writes wrangler's output file, and the new version's id read from it (never from the printed
   * text).
   */
  newVersion(title: string, args: string[], record: "version-upload" | "deploy"): string {
    if (this.facts.dryRun) {
      this.wrangler(title, args);
      return "<new version>";
    }
    const dir = mkdtempSync(join(tmpdir(), "store-orders-deploy-"));
    try {
      const output = join(dir, "wrangler-output.ndjson");
      this.wrangler(title, args, { WRANGLER_OUTPUT_FILE_PATH: output });
      return versionFromOutput(output, record);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }

  /**
   * The smoke checks against the new version only; a version deployed a moment ago may take seconds to answer its
   * override everywhere: retried, then a clear failure.
   */
  async smoke(title: string, newVersion: string): Promise<void> {
    const { smokeBase, key, worker, propagationWait, dryRun } = this.facts;
    const target: SmokeTarget = { baseUrl: smokeBase, key: key ?? "", version: { worker, id: newVersion } };
    this.out(`== ${title}: smoke checks against ${target.baseUrl}, ${worker}="${newVersion}" only`);
    if (dryRun) return;
    for (let attempt = 1; ; attempt++) {
      if (this.signal.aborted) throw this.signal.reason;
      const results = await runSmokeChecks(target);
      const failed = results.filter((result) => result.problem !== undefined);
      for (const line of describeResults(results)) this.out(`   ${line}`);
      if (failed.length === 0) return;
      if (attempt < 5 && failed.every((result) => result.wrongVersion)) {
        this.out(`   (the version override is not applied yet; again in ${propagationWait} s)`);
        await sleep(propagationWait, this.signal);
        continue;
      }
      throw new Error(`the smoke checks failed at ${title}: ${failed[0]!.problem}`);
    }
  }

  /** Turns read replication on for the D1 database `name`, found by name as wrangler finds it. */
  async replication(name: string, access: AnalyticsAccess): Promise<void> {
    const { env, dryRun } = this.facts;
    this.out(`== Turning D1 read replication on for ${name}: PUT /accounts/<account>/d1/database/<uuid>`);
    if (dryRun) return;
    const info = this.run.run(["d1", "info", name, "--env", env, "--json"]);
    if (info.status !== 0) throw new Error(`wrangler d1 info ${name} failed: ${info.stderr.trim()}`);
    await enableReadReplication(access, (JSON.parse(info.stdout) as { uuid: string }).uuid);
  }

  /**
   * The step's health: the new version against the previous one over the step's window; unhealthy fails the release
   * (rolled back).
   */
  async gate(percent: number, windowSeconds: number, newVersion: string): Promise<void> {
    const { gate, dryRun, thresholds } = this.facts;
    const current = this.facts.current!;
    if (!gate) return this.out(`== ${percent}%: no health gate (--no-health-gate): the smoke check decides`);
    const sql = healthQuery(gate.dataset, [newVersion, current.id], windowSeconds);
    this.out(
      `== ${percent}%: health gate: the new version against ${current.id} over the step's ` +
        `${Math.ceil(windowSeconds)} ` +
        `` +
        `` +
        `s (Analytics Engine SQL API)`,
    );
    if (dryRun) {
      for (const line of sql.split("\n")) this.out(`   ${line}`);
      return;
    }
    if (this.signal.aborted) throw this.signal.reason;
    let health: ReturnType<typeof readHealthAnswer>;
    try {
      health = readHealthAnswer(await runAnalyticsSql(gate.access, sql), [newVersion, current.id]);
    } catch (error) {
      throw new Error(`the health gate could not judge ${percent}% (${(error as Error).message}); not ramping blind`);
    }
    const judged = judgeHealth(health.get(newVersion)!, health.get(current.id)!, thresholds);
    this.out(`   ${judged.line}: ${judged.verdict}`);
    if (judged.verdict === "unhealthy")
      throw new Error(`the health gate failed at ${percent}%: ${judged.reasons.join("; ")}`);
    for (const reason of judged.reasons) this.out(`   ${reason}`);
  }
}

/**
 * The ramp as data: 0% first (the new version deployed, reached only by the smoke checks' override), then each step.
 */
const rampOf = (steps: readonly number[]) => [
  { percent: 0, title: "Deploying the new version at 0%" },
  ...steps.map((percent) => ({ percent, title: `Ramping to ${percent}%` })),
];

async function release(
  argv: string[],
  { cwd, out, signals = process, wrangler = wranglerProcesses }: DeployContext,
): Promise<void> {
  const git: Git = (...args) =>
    execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  const facts = preflight(argv, cwd, git, wrangler, out);
  const { env, worker, commit, subject, current, allAtOnce, migrationsChanged, wait, dryRun } = facts;
  const interruption = interruptible(signals);
  try {
    const steps = new ReleaseSteps(facts, wrangler, out, interruption.signal);
    if (current === undefined) return await firstRelease(facts, steps, out);
    const guard = (restorable: boolean, traffic: () => Promise<void>) =>
      guarded({ env, previous: current.id, restorable, dryRun, wrangler, out }, traffic);

    steps.wrangler(`Applying D1 migrations to ${env}`, ["d1", "migrations", "apply", "DB", "--remote", "--env", env]);
    if (allAtOnce) {
      const newVersion = steps.newVersion(
        `Deploying ${worker} all at once`,
        ["deploy", "--env", env, "--tag", commit, `--message=${subject}`],
        "deploy",
      );
      // A migration the previous version never had cannot be rolled back to it: the smoke check decides, and a failure
      // says what to do by hand.
      await guard(!migrationsChanged, () => steps.smoke("100%", newVersion));
      return out(done(env, dryRun));
    }

    const newVersion = steps.newVersion(
      `Uploading the new version`,
      ["versions", "upload", "--env", env, "--tag", commit, `--message=${subject}`],
      "version-upload",
    );
    await guard(true, async () => {
      for (const { percent, title } of rampOf(facts.steps)) {
        steps.wrangler(title, deployVersions(env, split(newVersion, current.id, percent), `${subject} (${percent}%)`));
        // A step that splits traffic runs its wait, then the gate on that traffic; at 100% there is no previous
        // version's traffic left to compare with.
        if (percent > 0 && percent < 100) {
          const stepStarted = Date.now();
          if (!dryRun && wait > 0) await sleep(wait, interruption.signal);
          await steps.gate(percent, dryRun ? wait : (Date.now() - stepStarted) / 1000, newVersion);
        }
        await steps.smoke(`${percent}%`, newVersion);
      }
    });
    out(done(env, dryRun));
  } finally {
    interruption.dispose();
  }
}

/**
 * An environment's first release: an upload that serves nothing provisions the D1 database and KV namespace by name,
 * creates the Durable Object classes and sets the secrets (wrangler provisions only in an upload or a deploy, and
 * `d1 migrations apply --remote` needs the database to exist); the migrations and, in production, read replication
 * follow; only then the deploy that attaches the routes and the cron. There is no previous version to go back to.
 */
async function firstRelease(facts: ReleaseFacts, steps: ReleaseSteps, out: (line: string) => void): Promise<void> {
  const { env, worker, commit, subject, first, dryRun } = facts;
  const dir = mkdtempSync(join(tmpdir(), "store-orders-deploy-"));
  try {
    const secretsFile = join(dir, "secrets.json");
    const secrets = [...REQUIRED_SECRETS, ...OPTIONAL_SECRETS].filter((name) => process.env[name]);
    if (!dryRun)
      writeFileSync(secretsFile, JSON.stringify(Object.fromEntries(secrets.map((name) => [name, process.env[name]]))), {
        mode: 0o600,
      });
    steps.wrangler(
      `Provisioning ${env} (D1, KV, Durable Object classes) with its secrets (${secrets.join(", ")}), serving nothing`,
      ["versions", "upload", "--env", env, "--tag", commit, `--message=${subject}`, "--secrets-file", secretsFile],
    );
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  steps.wrangler(`Applying D1 migrations to ${env}`, ["d1", "migrations", "apply", "DB", "--remote", "--env", env]);
  if (first!.replication) await steps.replication(first!.database, first!.replication);
  const newVersion = steps.newVersion(
    `Deploying ${worker}: its routes and cron from now on`,
    ["deploy", "--env", env, "--tag", commit, `--message=${subject}`],
    "deploy",
  );
  try {
    await steps.smoke("100%", newVersion);
  } catch (error) {
    throw new Refused(
      `FAILED: ${(error as Error).message}. ${env} served nothing before this release, so it stays deployed: fix ` +
        `forward with another release (docs/operations.md#the-first-release).`,
    );
  }
  if (!facts.key)
    out(
      `\nNo key can exist before a first release: only the checks that need none ran. Issue a key of ${env} and run ` +
        `npm run smoke -- --base-url ${facts.smokeBase} --key <key>.`,
    );
  out(done(env, dryRun));
}

/**
 * SIGINT and SIGTERM (a Ctrl-C, a CI timeout) during a release abort it, so its guard restores the previous version
 * instead of the process dying mid-ramp.
 */
function interruptible(signals: Pick<NodeJS.EventEmitter, "on" | "off">): { signal: AbortSignal; dispose(): void } {
  const controller = new AbortController();
  const handlers = (["SIGINT", "SIGTERM"] as const).map(
    (name) => [name, () => controller.abort(new Error(`interrupted by ${name}`))] as const,
  );
  for (const [name, handler] of handlers) signals.on(name, handler);
  return {
    signal: controller.signal,
    dispose: () => {
      for (const [name, handler] of handlers) signals.off(name, handler);
    },
  };
}

interface Guard {
  env: string;
  previous: string;
  /** False when the release changed the Durable Object classes: the previous version cannot run with them. */
  restorable: boolean;
  dryRun: boolean;
  wrangler: Wrangler;
  out(line: string): void;
}

/**
 * Runs the release's traffic steps; on any failure or interruption (the steps stop at `signal`), 100% back on the
 * previous version (when it can run), and one line saying so.
 */
async function guarded(
  { env, previous, restorable, dryRun, wrangler, out }: Guard,
  traffic: () => Promise<void>,
): Promise<void> {
  const rollback = (why: string) => deployVersions(env, [`${previous}@100%`], why);
  if (dryRun) {
    await traffic();
    out(
      restorable
        ? `== On any failure from here: wrangler ${rollback("rollback").join(" ")}`
        : `== On any failure from here: no rollback (${MIGRATED})`,
    );
    return;
  }
  try {
    await traffic();
  } catch (error) {
    const what = error instanceof Error ? error.message : String(error);
    if (!restorable)
      throw new Refused(`FAILED: ${what}. Not rolled back to ${previous}: ${MIGRATED}. ${MIGRATED_BY_HAND}`);
    const restored = wrangler.inTerminal(rollback(`rollback: ${what}`)) === 0;
    throw new Refused(
      restored
        ? `FAILED: ${what}. Restored 100% of ${env} to ${previous}.`
        : `FAILED: ${what}. Restoring 100% to ${previous} FAILED too: run wrangler ${rollback("rollback").join(" ")}`,
    );
  }
}

const MIGRATED = "this release changed the Durable Object classes, which the previous version cannot run with";
const MIGRATED_BY_HAND =
  "By hand (docs/operations.md#rollback): fix forward with another --all-at-once release, or, if the new class holds " +
  'nothing yet, declare it deleted (`"state": "deleted"` in its exports entry) and release that --all-at-once before ' +
  "moving traffic back";

const done = (env: string, dryRun: boolean) =>
  dryRun ? `\nDry run: nothing was run.` : `\nReleased to ${env}: 100% on the new version, every smoke check passed.`;

/** Cloudflare's API with the operator's credentials; refused with `why` (what needs them) without them. */
function cloudflareAccess(why: string): AnalyticsAccess {
  const accountId = process.env.CLOUDFLARE_ACCOUNT_ID?.trim();
  const apiToken = process.env.CLOUDFLARE_API_TOKEN?.trim();
  if (!accountId || !apiToken) throw new Refused(why);
  return { accountId, apiToken, apiBase: process.env.CLOUDFLARE_API_BASE_URL?.trim() || CLOUDFLARE_API };
}

/**
 * Where the health gate reads the request analytics: refused without credentials (the release must not ramp blind
 * unless told to).
 */
const analyticsAccess = (env: string) =>
  cloudflareAccess(
    `Not deploying ${env} gradually: the health gate needs CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN (a token ` +
      `that may read Account Analytics) to compare the new version with the previous one at each step. Set them, or ` +
      `run with --no-health-gate to ramp on the smoke checks alone.`,
  );

/** What turns read replication on in a first production release (docs/design/reliability.md#read-replication). */
const replicationAccess = (env: string) =>
  cloudflareAccess(
    `Not deploying ${env}: its first release turns D1 read replication on, which needs CLOUDFLARE_ACCOUNT_ID and ` +
      `CLOUDFLARE_API_TOKEN (a token that may edit D1).`,
  );

/**
 * How wrangler says there is nothing deployed: no such Worker (Cloudflare's API error 10007, or its own words), or one
 * whose first release stopped after its upload ("has no deployments").
 */
const NOTHING_DEPLOYED =
  /\[code: 10007\]|Worker "[^"]+"( \(env: [^)]+\))? not found\.|The Worker \S+ has no deployments\./;

/**
 * The version serving 100% of `env` now, and its tag when it is a commit id (anything else is read as no tag);
 * undefined when the Worker does not exist yet.
 */
function currentVersion(env: string, wrangler: Wrangler): { id: string; tag: string | undefined } | undefined {
  const status = wrangler.run(["deployments", "status", "--env", env, "--json"]);
  if (status.status !== 0 && NOTHING_DEPLOYED.test(status.stderr)) return undefined;
  if (status.status !== 0) throw new Error(`wrangler deployments status failed: ${status.stderr.trim()}`);
  const versions = (JSON.parse(status.stdout) as { versions: { version_id: string; percentage: number }[] }).versions;
  if (versions.length !== 1 || versions[0]!.percentage !== 100) {
    throw new Refused(
      `Not deploying: ${env} is already split between versions ` +
        `(${versions.map((v) => `${v.version_id}@${v.percentage}%`).join(", ")}); ` +
        "finish or roll back that release first.",
    );
  }
  const id = versions[0]!.version_id;
  const view = wrangler.run(["versions", "view", id, "--env", env, "--json"]);
  const tag =
    view.status === 0
      ? (JSON.parse(view.stdout) as { annotations?: Record<string, string> }).annotations?.["workers/tag"]
      : undefined;
  return { id, tag: tag !== undefined && COMMIT.test(tag) ? tag : undefined };
}

/**
 * The required secrets `env` would run without: those the Worker lacks (`wrangler secret list`), or before its first
 * release those this process's environment lacks, which that release uploads.
 */
function missingSecrets(env: string, exists: boolean, wrangler: Wrangler): string[] {
  if (!exists) return REQUIRED_SECRETS.filter((name) => !process.env[name]);
  const listed = wrangler.run(["secret", "list", "--env", env, "--format", "json"]);
  if (listed.status !== 0) throw new Error(`wrangler secret list failed: ${listed.stderr.trim()}`);
  const names = new Set((JSON.parse(listed.stdout) as { name: string }[]).map((secret) => secret.name));
  return REQUIRED_SECRETS.filter((name) => !names.has(name));
}

/**
 * The full id of a commit the operator named (hex only, so it cannot be an option); refused when this repository does
 * not have it.
 */
function resolveCommit(git: (...args: string[]) => string, named: string): string {
  try {
    return git("rev-parse", "--verify", "--end-of-options", `${named}^{commit}`);
  } catch {
    throw new Refused(`--compare-migrations-with ${named}: no such commit in this repository`);
  }
}

/**
 * Whether the env's Durable Object classes are declared the same now as at `commit` (40 hex digits, never an option:
 * `--end-of-options`), whichever configuration file that commit has; false when it cannot be read.
 */
function sameLifecycle(git: (...args: string[]) => string, commit: string, env: string, configPath: string): boolean {
  const now = durableObjectLifecycle(readFileSync(configPath, "utf8"), CONFIG_FILES[0], env);
  for (const file of CONFIG_FILES) {
    let text: string;
    try {
      text = git("show", "--end-of-options", `${commit}:${file}`);
    } catch {
      continue;
    }
    return durableObjectLifecycle(text, file, env) === now;
  }
  return false;
}

/** The new version's id, from the record wrangler wrote to its output file. */
function versionFromOutput(output: string, type: "version-upload" | "deploy"): string {
  const records = readFileSync(output, "utf8")
    .split("\n")
    .filter(Boolean)
    .map((line) => JSON.parse(line) as { type?: string; version_id?: string });
  const id = records.find((record) => record.type === type)?.version_id;
  if (!id) throw new Error(`wrangler wrote no version id to its output file (no "${type}" record)`);
  return id;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  process.exitCode = await runDeploy(process.argv.slice(2), {
    cwd: process.cwd(),
    out: (line) => console.log(line),
    err: (line) => console.error(line),
  });
}
