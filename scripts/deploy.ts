/**
 * `npm run deploy:staging` / `npm run deploy:production`: remote D1 migrations
 * first, then the Worker, so new code never runs against an old schema.
 * Migrations must therefore stay backwards compatible with the code already
 * deployed (add, never rename or drop, in the same release).
 */
import { isDeployedEnvironment, placeholdersIn, readEnvironment } from "./lib/environments";
import { runWranglerInTerminal } from "./lib/wrangler";

const env = process.argv[2] ?? "";
if (!isDeployedEnvironment(env)) {
  console.error(`usage: tsx scripts/deploy.ts staging|production (got "${env}")`);
  process.exit(1);
}

const config = readEnvironment(env);
const placeholders = placeholdersIn(config);
if (placeholders.length > 0) {
  console.error(`Not deploying ${env}: wrangler.toml still has placeholder ids for ${placeholders.join(", ")}.`);
  console.error(`Create the resources and fill in the ids first (docs/operations.md#first-time-set-up-of-an-environment).`);
  process.exit(1);
}

step(`Applying D1 migrations to ${env}`, ["d1", "migrations", "apply", "DB", "--remote", "--env", env]);
step(`Deploying ${config.name}`, ["deploy", "--env", env]);
console.log(`\nDeployed ${env}. Check it: npm run smoke -- --base-url ${String(config.vars.BASE_URL)} --key <an ${env} API key>`);

function step(title: string, args: string[]): void {
  console.log(`\n== ${title}: wrangler ${args.join(" ")}`);
  const status = runWranglerInTerminal(args);
  if (status !== 0) {
    console.error(`\n${title} failed (exit ${status}); nothing after it was run.`);
    process.exit(status);
  }
}
