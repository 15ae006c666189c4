/**
 * The second half of `npm test`, after `npm run check`: the three vitest
 * projects (vitest.config.ts), two runs at once. The e2e files take turns on
 * one shared `npm start` and mostly wait on it and on a browser, so they run
 * beside the workers and node files rather than after them: vitest puts a
 * project that runs one file at a time in a group of its own, after every
 * other, which left a core idle for four minutes of every run. The workers
 * and node run is printed as it goes; the e2e run whole once it ends, so the
 * two never interleave. Arguments (`npm test -- <files>`) go to one plain
 * `vitest run`.
 */
import { spawn } from "node:child_process";

const vitest = "node_modules/.bin/vitest";
const env = { ...process.env, WRANGLER_SEND_METRICS: "false" };

function run(args: readonly string[], buffered: boolean): Promise<{ status: number; output: string }> {
  return new Promise((resolve) => {
    const child = spawn(vitest, ["run", ...args], { env, stdio: ["ignore", buffered ? "pipe" : "inherit", buffered ? "pipe" : "inherit"] });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk));
    child.on("error", (error) => resolve({ status: 1, output: `${output}${String(error)}\n` }));
    child.on("close", (status, signal) => resolve({ status: status ?? (signal ? 1 : 0), output }));
  });
}

const chosen = process.argv.slice(2);
if (chosen.length > 0) process.exit((await run(chosen, false)).status);

const started = Date.now();
let e2eEnded = false;
const e2e = run(["--project", "e2e"], true).finally(() => (e2eEnded = true));
const rest = await run(["--project", "workers", "--project", "node"], false);
if (!e2eEnded) console.log("\nThe workers and node projects are done; the e2e project is still running (its output follows when it ends)…");
const ended = await e2e;
process.stdout.write(`\n── e2e ──\n${ended.output}`);
const seconds = Math.round((Date.now() - started) / 1000);
const failed = [...(rest.status === 0 ? [] : ["workers and node"]), ...(ended.status === 0 ? [] : ["e2e"])];
console.log(failed.length === 0 ? `\nEvery project passed in ${seconds} s.` : `\nFAILED: ${failed.join(", ")} (${seconds} s).`);
process.exit(failed.length === 0 ? 0 : 1);
