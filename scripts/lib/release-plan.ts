/**
 * The rules of a gradual release (docs/operations.md#promotion-staging-smoke-production),
 * as plain functions: the ramp's steps, the traffic split of each, and
 * whether the Durable Object classes changed since the version now
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

/** The configuration files a commit may hold, newest first: `wrangler.toml` until the move to `wrangler.jsonc`. */
export const CONFIG_FILES = ["wrangler.jsonc", "wrangler.toml"] as const;

/**
 * The environment's Durable Object lifecycle (the declared `exports`, or the legacy `migrations`) in a configuration
 * file's text, as comparable JSON. A version cannot carry a change to it: wrangler refuses a split between versions
 * whose `exports` differ ("All versions in a multi-version deployment must declare identical `exports`").
 */
export function durableObjectLifecycle(text: string, file: (typeof CONFIG_FILES)[number], env: string): string {
  const dir = mkdtempSync(join(tmpdir(), "store-orders-release-"));
  try {
    const path = join(dir, file);
    writeFileSync(path, text);
    const config = unstable_readConfig({ config: path, env }, { hideWarnings: true });
    return JSON.stringify({ exports: config.exports ?? {}, migrations: config.migrations ?? [] });
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
