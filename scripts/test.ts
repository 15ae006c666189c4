/**
 * `npm test`: `npm run check` and the vitest projects (vitest.config.ts). The
 * e2e files take turns on one shared `npm start` and mostly wait on it and on
 * a browser; `npm start`'s own tests (e2e-own) wait on their services. They
 * are the longest path, so each starts in the first second, in a vitest run
 * of its own: in one run with the others, vitest puts a project that runs
 * one file at a time in a group after every other, and caps a group's files
 * at its two workers whatever their projects. Beside them, the runs that
 * are only CPU: the check (types, wrangler's, the environments'
 * configuration), then the workers and the node projects side by side at a
 * lower priority (nice 10). With the check too, all at once they slowed
 * each other (npm test 407 s in `.ci/run` on an idle machine, against 397 s
 * one after another); sharing the cores equally with the e2e runs on a busy
 * machine, the shared npm start took 170 s to start instead of 35. The
 * check at the lower priority too took 133 s in `.ci/run` beside an `npm
 * start` serving, as long as the e2e runs' starts wanted the CPU, while they
 * ended 93 s before the node project. The check and the workers project are
 * printed as they go, the other runs whole once each ends, so none interleave.
 * Arguments (`npm test -- <files>`) go to one plain `vitest run`, after the
 * check.
 */
import { spawn } from "node:child_process";

const env = { ...process.env, WRANGLER_SEND_METRICS: "false" };

/** Runs `command`; `yielding`, at a lower priority (nice 10), so the e2e runs get the CPU first when they need it. */
function run(
  command: string,
  args: readonly string[],
  buffered: boolean,
  yielding: boolean,
): Promise<{ status: number; output: string }> {
  return new Promise((resolve) => {
    const [file, ...rest] = yielding ? ["nice", "-n", "10", command, ...args] : [command, ...args];
    const child = spawn(file!, rest, {
      env,
      stdio: ["ignore", buffered ? "pipe" : "inherit", buffered ? "pipe" : "inherit"],
    });
    let output = "";
    child.stdout?.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr?.on("data", (chunk: Buffer) => (output += chunk));
    child.on("error", (error) => resolve({ status: 1, output: `${output}${String(error)}\n` }));
    child.on("close", (status, signal) => resolve({ status: status ?? (signal ? 1 : 0), output }));
  });
}

const vitest = (args: readonly string[], buffered: boolean, yielding = false) =>
  run("node_modules/.bin/vitest", ["run", ...args], buffered, yielding);
const check = (buffered: boolean) => run("node_modules/.bin/tsx", ["scripts/check.ts"], buffered, false);

const chosen = process.argv.slice(2);
if (chosen.length > 0) {
  const checked = await check(false);
  process.exit(checked.status === 0 ? (await vitest(chosen, false)).status : checked.status);
}

const started = Date.now();
/** When each held run ended, in seconds since npm test started. */
const endedAt = new Map<string, number>();
/** A run whose output is held and printed whole once it ends. */
const held = (name: string, running: Promise<{ status: number; output: string }>) => ({
  name,
  result: running.finally(() => endedAt.set(name, Math.round((Date.now() - started) / 1000))),
});
const waitingOnServices = [
  held("e2e-own", vitest(["--project", "e2e-own"], true)),
  held("e2e", vitest(["--project", "e2e"], true)),
];
const failed: string[] = [];
/** Waits for a run printed as it goes, then says how it ended and when. */
async function streamed(name: string, running: Promise<{ status: number }>): Promise<void> {
  const from = Date.now();
  const { status } = await running;
  console.log(
    `\n── ${name}: ${status === 0 ? "passed" : "FAILED"} in ${Math.round((Date.now() - from) / 1000)} s ` +
      `(${Math.round((Date.now() - started) / 1000)} s since npm test started) ──`,
  );
  if (status !== 0) failed.push(name);
}
await streamed("npm run check", check(false));
// The two projects side by side: one after the other, each left a core idle while its last file ran.
const node = held("node", vitest(["--project", "node"], true, true));
await streamed("workers", vitest(["--project", "workers"], false, true));
const rest = [node, ...waitingOnServices];
const waiting = rest.filter(({ name }) => !endedAt.has(name)).map(({ name }) => name);
if (waiting.length > 0)
  console.log(
    `\nThe check and the workers project are done; still running: ${waiting.join(", ")} (the output of each follows ` +
      `when it ends)…`,
  );
for (const { name, result } of rest) {
  const { status, output } = await result;
  process.stdout.write(`\n── ${name}: ended ${endedAt.get(name)} s after npm test started ──\n${output}`);
  if (status !== 0) failed.push(name);
}
const seconds = Math.round((Date.now() - started) / 1000);
console.log(
  failed.length === 0
    ? `\nThe check and every project passed in ${seconds} s.`
    : `\nFAILED: ${failed.join(", ")} (${seconds} s).`,
);
process.exit(failed.length === 0 ? 0 : 1);
