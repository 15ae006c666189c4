/**
 * `npm test`: `npm run check` and the vitest projects (vitest.config.ts), each
 * in a process of its own and all at once. Vitest runs the projects of one
 * run in groups, one group after another, and caps a group's files at its
 * workers (two here) whatever its projects: the e2e files, which take turns
 * on one shared `npm start` and mostly wait on it and on a browser, waited
 * for every other file; npm start's own tests (e2e-own), waiting on their
 * services, held a worker the workers files needed; and the node files' long
 * simulations went first and held both. The e2e run is the longest path, so
 * it starts in the first second, and the runs that are only CPU (the
 * workers and node projects, the check: types, wrangler's, the
 * environments' configuration) yield to it and to e2e-own: sharing the
 * cores equally on a busy machine, the shared npm start took 170 s to start
 * instead of 35, and the e2e run 534 s instead of 418. The workers run is
 * printed as it goes; the others whole once each ends, so none interleave.
 * Arguments (`npm test -- <files>`) go to one plain `vitest run`, after the
 * check.
 */
import { spawn } from "node:child_process";

const env = { ...process.env, WRANGLER_SEND_METRICS: "false" };

/** Runs `command`; `yielding`, at a lower priority (nice 10), so the e2e runs get the CPU first when they need it. */
function run(command: string, args: readonly string[], buffered: boolean, yielding: boolean): Promise<{ status: number; output: string }> {
  return new Promise((resolve) => {
    const [file, ...rest] = yielding ? ["nice", "-n", "10", command, ...args] : [command, ...args];
    const child = spawn(file!, rest, { env, stdio: ["ignore", buffered ? "pipe" : "inherit", buffered ? "pipe" : "inherit"] });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk));
    child.on("error", (error) => resolve({ status: 1, output: `${output}${String(error)}\n` }));
    child.on("close", (status, signal) => resolve({ status: status ?? (signal ? 1 : 0), output }));
  });
}

const vitest = (args: readonly string[], buffered: boolean, yielding = false) => run("node_modules/.bin/vitest", ["run", ...args], buffered, yielding);
const check = (buffered: boolean, yielding = false) => run("node_modules/.bin/tsx", ["scripts/check.ts"], buffered, yielding);

const chosen = process.argv.slice(2);
if (chosen.length > 0) {
  const checked = await check(false);
  process.exit(checked.status === 0 ? (await vitest(chosen, false)).status : checked.status);
}

const started = Date.now();
const ended = new Set<string>();
/** A run whose output is held and printed whole once it ends. */
const held = (name: string, running: Promise<{ status: number; output: string }>) => ({ name, result: running.finally(() => ended.add(name)) });
const others = [
  held("node", vitest(["--project", "node"], true, true)),
  held("npm run check", check(true, true)),
  held("e2e-own", vitest(["--project", "e2e-own"], true)),
  held("e2e", vitest(["--project", "e2e"], true)),
];
const streamed = await vitest(["--project", "workers"], false, true);
const waiting = others.filter(({ name }) => !ended.has(name)).map(({ name }) => name);
if (waiting.length > 0) console.log(`\nThe workers project is done; still running: ${waiting.join(", ")} (the output of each follows when it ends)…`);
const failed = streamed.status === 0 ? [] : ["workers"];
for (const { name, result } of others) {
  const { status, output } = await result;
  process.stdout.write(`\n── ${name} ──\n${output}`);
  if (status !== 0) failed.push(name);
}
const seconds = Math.round((Date.now() - started) / 1000);
console.log(failed.length === 0 ? `\nThe check and every project passed in ${seconds} s.` : `\nFAILED: ${failed.join(", ")} (${seconds} s).`);
process.exit(failed.length === 0 ? 0 : 1);
