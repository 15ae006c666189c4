import { spawn, spawnSync, type ChildProcess } from "node:child_process";
import { createRequire } from "node:module";
import { dirname, join } from "node:path";

// wrangler exports no path to its executable, only its package.json.
const wranglerBin = join(dirname(createRequire(import.meta.url).resolve("wrangler/package.json")), "bin/wrangler.js");

/**
 * How wrangler is run: the project's own, or the executable STORE_ORDERS_WRANGLER
 * names (the deploy's tests use a fake that records its arguments).
 */
const wranglerCommand = (): [string, string[]] =>
  process.env.STORE_ORDERS_WRANGLER ? [process.env.STORE_ORDERS_WRANGLER, []] : [process.execPath, [wranglerBin]];

const quiet = { WRANGLER_SEND_METRICS: "false", CLOUDFLARE_CF_FETCH_ENABLED: "false" };
// CI=true makes one-shot commands (migrations apply) assume "yes" instead of prompting.
const unattended = { ...quiet, CI: "true" };

export interface WranglerResult {
  status: number;
  stdout: string;
  stderr: string;
}

/** Runs wrangler to completion and captures what it printed. */
export function runWrangler(args: string[]): WranglerResult {
  const [command, prefix] = wranglerCommand();
  const result = spawnSync(command, [...prefix, ...args], {
    env: { ...process.env, ...unattended },
    encoding: "utf8",
    maxBuffer: 64 * 1024 * 1024,
  });
  return { status: result.status ?? 1, stdout: result.stdout, stderr: result.stderr };
}

/** Runs wrangler to completion without blocking, so several can run at once, and captures what it printed. */
export function runWranglerAsync(args: string[]): Promise<WranglerResult> {
  return new Promise((resolve) => {
    const [command, prefix] = wranglerCommand();
    const child = spawn(command, [...prefix, ...args], {
      env: { ...process.env, ...unattended },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (chunk) => (stdout += chunk));
    child.stderr.on("data", (chunk) => (stderr += chunk));
    child.on("close", (status) => resolve({ status: status ?? 1, stdout, stderr }));
  });
}

/** Runs wrangler and fails loudly, with its output, when it does. */
export function mustRunWrangler(args: string[]): string {
  const result = runWrangler(args);
  if (result.status !== 0) {
    throw new Error(`wrangler ${args.join(" ")} failed:\n${result.stderr || result.stdout}`);
  }
  return result.stdout;
}

/** Runs wrangler to completion in this terminal (its output shown as it comes) and returns its exit status. */
export function runWranglerInTerminal(args: string[], env: Record<string, string> = {}): number {
  const [command, prefix] = wranglerCommand();
  const result = spawnSync(command, [...prefix, ...args], {
    env: { ...process.env, ...unattended, ...env },
    stdio: "inherit",
  });
  return result.status ?? 1;
}

/**
 * How a command runs wrangler: to completion, captured, or in this terminal. A release's tests hand one in that answers
 * in-process.
 */
export interface Wrangler {
  run(args: string[]): WranglerResult;
  inTerminal(args: string[], env?: Record<string, string>): number;
}

/** Wrangler as a process per call (the project's own, or STORE_ORDERS_WRANGLER). */
export const wranglerProcesses: Wrangler = { run: runWrangler, inTerminal: runWranglerInTerminal };

/** Starts a long-running wrangler (dev) attached to this terminal. */
export function startWrangler(args: string[]): ChildProcess {
  return spawn(process.execPath, [wranglerBin, ...args], { env: { ...process.env, ...quiet }, stdio: "inherit" });
}
