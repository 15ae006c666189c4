import { spawn, type ChildProcess } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { freePorts } from "./ports";

/**
 * fetch(), retried once when a kept-alive connection turns out to have been
 * closed by the server while idle (undici: "other side closed"). The request
 * never reached the service then, so one retry is what a well-behaved
 * client does too.
 */
export async function fetchLocal(url: string, init?: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    if ((error as { cause?: { code?: string } }).cause?.code !== "UND_ERR_SOCKET") throw error;
    return fetch(url, init);
  }
}

export function tempStateDir(): { path: string; remove(): void } {
  const path = mkdtempSync(join(tmpdir(), "store-orders-state-"));
  return { path, remove: () => rmSync(path, { recursive: true, force: true }) };
}

export interface RunningService {
  baseUrl: string;
  /** The npm process's id, which is also its process group's: every process `npm start` runs is in that group. */
  pid: number;
  /** The demo key `npm start` made, for authenticated calls. */
  demoKey: string;
  /** fetch() against the service with the demo key, unless the init has its own Authorization. */
  call(path: string, init?: RequestInit): Promise<Response>;
  output(): string;
  stop(): Promise<void>;
}

/**
 * Runs `npm start` as a user would, on a free port and a state directory of
 * the test's own, and waits until it answers. stop() ends the whole process
 * group (npm, tsx, wrangler, workerd) so nothing outlives the test. Its
 * debugger gets a free port too: two wranglers starting at once both take
 * 9229 when they find it free, and the second fails.
 */
export async function startService(
  stateDir: string,
  extraEnv: Record<string, string> = {},
  extraArgs: string[] = [],
): Promise<RunningService> {
  const [port, inspectorPort] = await freePorts(2);
  const child: ChildProcess = spawn(
    "npm",
    [
      "start",
      "--",
      "--port",
      String(port),
      "--inspector-port",
      String(inspectorPort),
      "--persist-to",
      stateDir,
      ...extraArgs,
    ],
    {
      detached: true,
      env: { ...process.env, ...extraEnv },
      stdio: ["ignore", "pipe", "pipe"],
    },
  );
  let output = "";
  child.stdout?.on("data", (chunk) => (output += chunk));
  child.stderr?.on("data", (chunk) => (output += chunk));
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));

  const stop = async () => {
    if (child.exitCode === null && child.pid) {
      try {
        process.kill(-child.pid, "SIGTERM");
      } catch {
        // already gone
      }
      const timer = setTimeout(() => child.pid && process.kill(-child.pid, "SIGKILL"), 10_000);
      await exited;
      clearTimeout(timer);
    }
  };

  const baseUrl = `http://127.0.0.1:${port}`;
  // Generous: migrations and workerd start slowly on a loaded 2-core machine.
  const deadline = Date.now() + 180_000;
  while (Date.now() < deadline) {
    if (child.exitCode !== null) break;
    try {
      await fetch(`${baseUrl}/`);
      const demoKey = readFileSync(join(stateDir, "demo-api-key"), "utf8").trim();
      const call = (path: string, init: RequestInit = {}) => {
        const headers = new Headers(init.headers);
        if (!headers.has("Authorization")) headers.set("Authorization", `Bearer ${demoKey}`);
        return fetchLocal(`${baseUrl}${path}`, { ...init, headers });
      };
      return { baseUrl, pid: child.pid!, demoKey, call, output: () => output, stop };
    } catch {
      await new Promise((resolve) => setTimeout(resolve, 250));
    }
  }
  await stop();
  throw new Error(`npm start did not come up on ${baseUrl}:\n${output}`);
}
