import { execFile } from "node:child_process";
import { runKeysCommand } from "../../scripts/keys";

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

/**
 * `npm run keys` as a function in this process: the same code as the command, without a Node started for every call.
 * It reaches the `npm start` serving `stateDir` as the command does.
 */
export function useKeysCommand(stateDir: () => string): { run(...args: string[]): Promise<CommandResult> } {
  return {
    async run(...args) {
      let stdout = "";
      let stderr = "";
      const output = {
        out: (line: string) => void (stdout += `${line}\n`),
        err: (line: string) => void (stderr += `${line}\n`),
      };
      const status = await runKeysCommand([...args, "--persist-to", stateDir()], output);
      return { status, stdout, stderr };
    },
  };
}
