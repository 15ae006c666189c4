/**
 * `npm run check` (and so `npm test`): every deployed environment in
 * wrangler.jsonc has what the local one has, and builds. Wrangler only warns
 * about some mistakes (a binding left out of an environment, an unknown
 * field), so its configuration warnings fail this check too; an
 * environment with a problem found before its build is not built. The bench
 * worker's configuration must have everything the local one has.
 */
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import {
  DEPLOYED_ENVIRONMENTS,
  configProblems,
  missingFromConfig,
  readEnvironment,
  varProblems,
  webhookPipelineProblems,
} from "./lib/environments";
import { runWranglerAsync } from "./lib/wrangler";

const config = process.argv[2] ?? "wrangler.jsonc";
const local = readEnvironment(undefined, config);
let failed = false;

// The local worker's vars are what `npm start` and the tests run with.
const localVars = [...varProblems("local", local), ...webhookPipelineProblems("local", local)];
for (const problem of localVars) console.error(`FAIL ${problem}`);
if (localVars.length === 0) console.log("ok   local: vars valid");
failed ||= localVars.length > 0;

// The environments' dry-run builds run side by side: each is seconds of wrangler and esbuild.
const checked = await Promise.all(
  DEPLOYED_ENVIRONMENTS.map(async (env) => {
    const deployed = readEnvironment(env, config);
    const problems = [...varProblems(env, deployed), ...configProblems(env, deployed, local)];
    // A configuration already found wrong is reported as it is: its build would cost seconds to say no more.
    if (problems.length > 0) return { env, problems: [...problems, `${env}: not built until the above is fixed`] };
    const outdir = mkdtempSync(join(tmpdir(), `store-orders-dry-run-${env}-`));
    const dryRun = await runWranglerAsync([
      "deploy",
      "--dry-run",
      "--env",
      env,
      "--config",
      config,
      "--outdir",
      outdir,
    ]);
    rmSync(outdir, { recursive: true, force: true });
    const output = `${dryRun.stdout}\n${dryRun.stderr}`;
    if (dryRun.status !== 0) problems.push(`${env}: wrangler deploy --dry-run failed:\n${output.trim()}`);
    else if (/WARNING.*Processing .* configuration/.test(output)) {
      problems.push(`${env}: wrangler warned about the configuration:\n${output.trim()}`);
    }
    return { env, problems };
  }),
);
for (const { env, problems } of checked) {
  for (const problem of problems) console.error(`FAIL ${problem}`);
  if (problems.length === 0) console.log(`ok   ${env}: configuration complete, dry-run build succeeded`);
  failed ||= problems.length > 0;
}

// The benchmark runs the app under its own wrangler.jsonc, which must keep up with the app's.
const benchConfig = readEnvironment(undefined, "bench/wrangler.jsonc");
const bench = [
  ...missingFromConfig("bench/wrangler.jsonc", benchConfig, local),
  ...varProblems("bench/wrangler.jsonc", benchConfig),
  ...webhookPipelineProblems("bench/wrangler.jsonc", benchConfig),
];
for (const problem of bench) console.error(`FAIL ${problem}`);
if (bench.length === 0) console.log("ok   bench: the benchmark's worker has every var and binding, each valid");
failed ||= bench.length > 0;

process.exit(failed ? 1 : 0);
