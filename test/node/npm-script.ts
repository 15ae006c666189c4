import { execFile } from "node:child_process";

export interface CommandResult {
  status: number;
  stdout: string;
  stderr: string;
}

/**
 * Runs `npm run <script> -- <args>` as an operator would. Asynchronously: a
 * blocked event loop would leave fetch() holding connections the server has
 * since closed, and a test's own fake server could not answer.
 */
export function runNpmScript(script: string, ...args: string[]): Promise<CommandResult> {
  return new Promise((resolve) => {
    execFile(
      "npm",
      ["run", "--silent", script, "--", ...args],
      { encoding: "utf8", env: { ...process.env, WRANGLER_SEND_METRICS: "false" } },
      (error, stdout, stderr) => resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, stderr }),
    );
  });
}

/** `npm run keys -- <args>` against a local state folder. */
export function runKeys(stateDir: string, ...args: string[]): Promise<CommandResult> {
  return runNpmScript("keys", ...args, "--persist-to", stateDir);
}
