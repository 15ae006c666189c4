/**
 * The rules of a gradual release (docs/operations.md#promotion-staging-smoke-production),
 * as plain functions: the ramp's steps, the traffic split of each, and
 * whether the Durable Object migrations changed since the version now
 * deployed (then versions cannot carry the release).
 */
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unstable_readConfig } from "wrangler";

export const DEFAULT_STEPS = [10, 50, 100];

/** `--steps 10,50,100`: whole percentages, rising, ending at 100. */
export function parseSteps(text: string): number[] | undefined {
  const steps = text.split(",").map((step) => (/^[1-9][0-9]{0,2}$/.test(step.trim()) ? Number(step) : NaN));
  const rising = steps.every((step, i) => step <= 100 && (i === 0 || step > steps[i - 1]!));
  return rising && steps.at(-1) === 100 ? steps : undefined;
}

/** The version specs of `wrangler versions deploy` for `percent` on the new version, the rest on the current one. */
export function split(newVersion: string, currentVersion: string, percent: number): string[] {
  return percent >= 100 ? [`${newVersion}@100%`] : [`${newVersion}@${percent}%`, `${currentVersion}@${100 - percent}%`];
}

/**
 * The arguments of a traffic change; the message joined to its flag, so a subject starting with "-" is never an option.
 */
export const deployVersions = (env: string, versions: string[], message: string) => [
  "versions",
  "deploy",
  ...versions,
  "--env",
  env,
  "--yes",
  `--message=${message}`,
];

/** The environment's Durable Object migrations in a wrangler.toml's text, as comparable JSON. */
export function durableObjectMigrations(toml: string, env: string): string {
  const dir = mkdtempSync(join(tmpdir(), "store-orders-release-"));
  try {
    const file = join(dir, "wrangler.toml");
    writeFileSync(file, toml);
    return JSON.stringify(unstable_readConfig({ config: file, env }, { hideWarnings: true }).migrations ?? []);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
