/**
 * `npm run deploy:staging` / `npm run deploy:production`: a gradual release
 * (docs/operations.md#promotion-staging-smoke-production). D1 migrations first
 * (they only add, so old and new code both run on the new schema); the new
 * version uploaded, tagged with the commit; deployed at 0%; smoke-checked
 * against that version only; then ramped (10%, 50%, 100% by default) with a
 * smoke check between steps. Any failure puts 100% back on the version that
 * was serving and exits 1 with one line saying what failed and what was
 * restored. `--dry-run` prints every command and runs none.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { isDeployedEnvironment, placeholdersIn, readEnvironment } from "./lib/environments";
import { DEFAULT_STEPS, deployVersions, durableObjectMigrations, parseSteps, split } from "./lib/release-plan";
import { describeResults, runSmokeChecks, type SmokeTarget } from "./lib/smoke-checks";
import { runWrangler, runWranglerInTerminal } from "./lib/wrangler";

const USAGE = `Usage: npm run deploy:<staging|production> -- [--key <API key for the smoke checks>] [--steps 10,50,100] [--wait 60]
       [--base-url https://host/v1] [--all-at-once] [--dry-run]`;

class Refused extends Error {}

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
      "dry-run": { type: "boolean", default: false },
    },
  });
  const env = positionals[0] ?? "";
  if (!isDeployedEnvironment(env)) throw new Refused(`usage: the environment must be staging or production (got "${env}")\n${USAGE}`);
  const steps = parseSteps(values.steps);
  if (!steps) throw new Refused(`--steps takes rising whole percentages ending at 100, such as 10,50,100 (got "${values.steps}")`);
  const wait = Number(values.wait);
  const propagationWait = Number(values["propagation-wait"]);
  if (!(wait >= 0) || !(propagationWait >= 0)) throw new Refused("--wait and --propagation-wait take seconds");
  return { env, steps, wait, propagationWait, key: values.key ?? process.env.SMOKE_API_KEY, baseUrl: values["base-url"], allAtOnce: values["all-at-once"], dryRun: values["dry-run"] };
}

const sleep = (seconds: number) => new Promise((resolve) => setTimeout(resolve, seconds * 1000));

/** Where a release runs (the project's folder) and where it reports. */
export interface DeployContext {
  cwd: string;
  out(line: string): void;
  err(line: string): void;
}

/** Runs one release and returns its exit code: 0, or 1 with one line saying what failed (and what was restored). */
export async function runDeploy(argv: string[], context: DeployContext): Promise<number> {
  try {
    await release(argv, context);
    return 0;
  } catch (error) {
    context.err(error instanceof Refused ? error.message : `FAILED: ${error instanceof Error ? error.message : String(error)}. Nothing was deployed.`);
    return 1;
  }
}

async function release(argv: string[], { cwd, out }: DeployContext): Promise<void> {
  const git = (...args: string[]) => execFileSync("git", args, { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();
  const { env, steps, wait, propagationWait, key, baseUrl, allAtOnce, dryRun } = options(argv);
  const toml = join(cwd, "wrangler.toml");
  const config = readEnvironment(env, toml);
  const placeholders = placeholdersIn(config);
  if (placeholders.length > 0) {
    throw new Refused(`Not deploying ${env}: wrangler.toml still has placeholder ids for ${placeholders.join(", ")}. Create the resources and fill in the ids first (docs/operations.md#first-time-set-up-of-an-environment).`);
  }
  if (git("status", "--porcelain") !== "") throw new Refused(`Not deploying ${env}: the working tree has uncommitted changes; a release is one commit.`);
  if (!key && !dryRun) throw new Refused(`Not deploying ${env}: the smoke checks need an API key of ${env} (--key, or SMOKE_API_KEY).`);

  const worker = config.name;
  const commit = git("rev-parse", "HEAD");
  const subject = git("log", "-1", "--format=%s");
  const smokeBase = (baseUrl ?? String(config.vars.BASE_URL)).replace(/\/+$/, "");

  /** A wrangler call as the plan prints it; in a dry run, printed and not run. */
  const step = (title: string, args: string[], env: Record<string, string> = {}) => {
    out(`== ${title}: wrangler ${args.join(" ")}`);
    if (dryRun) return;
    const status = runWranglerInTerminal(args, env);
    if (status !== 0) throw new Error(`${title} failed (wrangler exit ${status})`);
  };
  const smoke = async (title: string, target: SmokeTarget) => {
    out(`== ${title}: smoke checks against ${target.baseUrl}${target.version ? `, ${target.version.worker}="${target.version.id}" only` : ""}`);
    if (dryRun) return;
    // A version deployed a moment ago may take seconds to answer its override everywhere: retried, then a clear failure.
    for (let attempt = 1; ; attempt++) {
      const results = await runSmokeChecks(target);
      const failed = results.filter((result) => result.problem !== undefined);
      for (const line of describeResults(results)) out(`   ${line}`);
      if (failed.length === 0) return;
      if (attempt < 5 && failed.every((result) => result.wrongVersion)) {
        out(`   (the version override is not applied yet; again in ${propagationWait} s)`);
        await sleep(propagationWait);
        continue;
      }
      throw new Error(`the smoke checks failed at ${title}: ${failed[0]!.problem}`);
    }
  };

  // What serves now, and the commit it was tagged with.
  const current = dryRun ? { id: "<current version>", tag: "<its commit>" } : currentVersion(env);
  out(`Releasing ${commit.slice(0, 12)} ("${subject}") to ${env} (${worker}); serving now: ${current.id}.`);

  const migrationsChanged = current.tag === undefined || !sameMigrations(git, current.tag, env, toml);
  if (migrationsChanged && !allAtOnce && !dryRun) {
    throw new Refused(
      `Not deploying ${env} gradually: the Durable Object migrations in wrangler.toml changed since the deployed version ` +
        `(${current.tag ? `tag ${current.tag.slice(0, 12)}` : "no tag to compare with"}), and versions cannot carry a migration. ` +
        `Check the release, then run it again with --all-at-once (plain wrangler deploy, then the same smoke checks).`,
    );
  }

  step(`Applying D1 migrations to ${env}`, ["d1", "migrations", "apply", "DB", "--remote", "--env", env]);
  if (allAtOnce) {
    step(`Deploying ${worker} all at once`, ["deploy", "--env", env, "--message", subject]);
    await guarded(env, current.id, dryRun, out, () => smoke("100%", { baseUrl: smokeBase, key: key ?? "" }));
    return out(done(env, dryRun));
  }

  const output = join(mkdtempSync(join(tmpdir(), "store-orders-deploy-")), "wrangler-output.ndjson");
  step(`Uploading the new version`, ["versions", "upload", "--env", env, "--tag", commit, "--message", subject], { WRANGLER_OUTPUT_FILE_PATH: output });
  const newVersion = dryRun ? "<new version>" : uploadedVersion(output);
  const target: SmokeTarget = { baseUrl: smokeBase, key: key ?? "", version: { worker, id: newVersion } };

  await guarded(env, current.id, dryRun, out, async () => {
    step(`Deploying the new version at 0%`, deployVersions(env, split(newVersion, current.id, 0), `${subject} (0%)`));
    await smoke("0%", target);
    for (const percent of steps) {
      step(`Ramping to ${percent}%`, deployVersions(env, split(newVersion, current.id, percent), `${subject} (${percent}%)`));
      if (!dryRun && wait > 0 && percent < 100) await sleep(wait);
      await smoke(`${percent}%`, target);
    }
  });
  out(done(env, dryRun));
}

/** Runs the release's traffic steps; on any failure, 100% back on `previous`, and one line saying so. */
async function guarded(env: string, previous: string, dryRun: boolean, out: (line: string) => void, steps: () => Promise<void>): Promise<void> {
  if (dryRun) {
    await steps();
    out(`== On any failure from here: wrangler ${deployVersions(env, [`${previous}@100%`], "rollback").join(" ")}`);
    return;
  }
  try {
    await steps();
  } catch (error) {
    const what = error instanceof Error ? error.message : String(error);
    const restored = runWranglerInTerminal(deployVersions(env, [`${previous}@100%`], `rollback: ${what}`)) === 0;
    throw new Refused(
      restored
        ? `FAILED: ${what}. Restored 100% of ${env} to ${previous}.`
        : `FAILED: ${what}. Restoring 100% to ${previous} FAILED too: run wrangler ${deployVersions(env, [`${previous}@100%`], "rollback").join(" ")}`,
    );
  }
}

const done = (env: string, dryRun: boolean) =>
  dryRun ? `\nDry run: nothing was run.` : `\nReleased to ${env}: 100% on the new version, every smoke check passed.`;

/** The version serving 100% of `env` now, and its tag (the commit it was uploaded with). */
function currentVersion(env: string): { id: string; tag: string | undefined } {
  const status = runWrangler(["deployments", "status", "--env", env, "--json"]);
  if (status.status !== 0) throw new Error(`wrangler deployments status failed: ${status.stderr.trim()}`);
  const versions = (JSON.parse(status.stdout) as { versions: { version_id: string; percentage: number }[] }).versions;
  if (versions.length !== 1 || versions[0]!.percentage !== 100) {
    throw new Refused(`Not deploying: ${env} is already split between versions (${versions.map((v) => `${v.version_id}@${v.percentage}%`).join(", ")}); finish or roll back that release first.`);
  }
  const id = versions[0]!.version_id;
  const view = runWrangler(["versions", "view", id, "--env", env, "--json"]);
  const tag = view.status === 0 ? (JSON.parse(view.stdout) as { annotations?: Record<string, string> }).annotations?.["workers/tag"] : undefined;
  return { id, tag: tag || undefined };
}

/** Whether the env's Durable Object migrations are the same now as at commit `tag`; false when that commit cannot be read. */
function sameMigrations(git: (...args: string[]) => string, tag: string, env: string, toml: string): boolean {
  try {
    return durableObjectMigrations(git("show", `${tag}:wrangler.toml`), env) === durableObjectMigrations(readFileSync(toml, "utf8"), env);
  } catch {
    return false;
  }
}

/** The new version's id, from wrangler's output file (never from its printed text). */
function uploadedVersion(output: string): string {
  const records = readFileSync(output, "utf8").split("\n").filter(Boolean).map((line) => JSON.parse(line) as { type?: string; version_id?: string });
  rmSync(join(output, ".."), { recursive: true, force: true });
  const id = records.find((record) => record.type === "version-upload")?.version_id;
  if (!id) throw new Error("wrangler versions upload wrote no version id to its output file");
  return id;
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  process.exitCode = await runDeploy(process.argv.slice(2), { cwd: process.cwd(), out: (line) => console.log(line), err: (line) => console.error(line) });
}
