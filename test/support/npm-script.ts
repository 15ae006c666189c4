import { execFile } from "node:child_process";
import { afterAll, beforeAll } from "vitest";
import { runKeysCommand } from "../../scripts/keys";
import { openKeyStore, type KeyStore } from "../../scripts/lib/key-store";

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
 * `npm run keys` as a function in this process, on one local store opened
 * for the whole test file: the same code as the command, without a Node and
 * a local runtime started for every call. Open it after the service has
 * created the state (useService's beforeAll runs first).
 */
export function useKeysCommand(stateDir: () => string): { run(...args: string[]): Promise<CommandResult> } {
  let store: KeyStore | undefined;
  beforeAll(async () => {
    store = await openKeyStore("local", stateDir());
  });
  afterAll(async () => {
    await store?.close();
  });
  return {
    async run(...args) {
      let stdout = "";
      let stderr = "";
      const output = {
        out: (line: string) => void (stdout += `${line}\n`),
        err: (line: string) => void (stderr += `${line}\n`),
      };
      const status = await runKeysCommand([...args, "--persist-to", stateDir()], output, store);
      return { status, stdout, stderr };
    },
  };
}
