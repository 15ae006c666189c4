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
 * A failed run's failures are printed again at the very end: CI shows only
 * the end of what a run printed.
 * Arguments (`npm test -- <files>`) go to one plain `vitest run`, after the
 * check.
 */
import { spawn } from "node:child_process";
import { accessSync, constants, mkdirSync, mkdtempSync, readdirSync, rmSync, statfsSync, statSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { buildAssets } from "./lib/assets";
import { processAlive } from "./lib/serving-record";

// The Node the project runs on (package.json's engines): npm puts the one it installs (the node package) first.
const [major = 0, minor = 0] = process.versions.node.split(".").map(Number);
if (major < 22 || (major === 22 && minor < 12)) {
  console.error(`npm test needs Node 22.12 or newer, and runs on ${process.version}: run \`npm install\` first.`);
  process.exit(1);
}
console.log(`Node ${process.version}`);

/**
 * `path` when it is a folder this process may write in with 2 GiB free (/dev/shm is a tmpfs on Linux; a container's
 * may be 64 MB, and chromium draws in it too); else undefined.
 */
function inMemory(path: string): string | undefined {
  try {
    accessSync(path, constants.W_OK);
    const { bavail, bsize } = statfsSync(path);
    return statSync(path).isDirectory() && bavail * bsize >= 2 ** 31 ? path : undefined;
  } catch {
    return undefined;
  }
}

/** Removes `path` and all in it, as far as this user may. */
function tryRemove(path: string): void {
  try {
    rmSync(path, { recursive: true, force: true });
  } catch {}
}

// Output passes through pipes: keep vitest's colours when a person is watching. Wrangler and Miniflare get a config
// folder of their own, so no run shares (or leaves) state in ~/.config, and never ask Cloudflare for a request's cf.
// Every temporary file of the run (Miniflare's storage, each npm start's state) is in one folder, in memory where the
// machine has a tmpfs: each Durable Object is a SQLite file made and deleted, and on a disk's file system that was a
// quarter of the workers runtime's CPU (CONTRIBUTING.md#tests).
const temporaries = inMemory("/dev/shm") ?? tmpdir();
// A run killed outright leaves its folder (in memory, until the machine restarts): the next takes away any whose run
// is gone. A run stopped by Ctrl-C or a TERM takes its own away.
for (const name of readdirSync(temporaries)) {
  const pid = /^store-orders-test-(\d+)-/.exec(name)?.[1];
  // Another user's (another's process once had the id) is theirs: it stays.
  if (pid && !processAlive(Number(pid))) tryRemove(join(temporaries, name));
}
const temporary = mkdtempSync(join(temporaries, `store-orders-test-${process.pid}-`));
process.on("exit", () => tryRemove(temporary));
process.on("SIGINT", () => process.exit(130));
process.on("SIGTERM", () => process.exit(143));
const configHome = join(temporary, "config");
mkdirSync(configHome);
// The consoles' pages as they are now, built once: the e2e runs' `npm start`s serve them and build nothing.
await buildAssets();
const env = {
  ...process.env,
  TMPDIR: temporary,
  STORE_ORDERS_ASSETS_BUILT: "1",
  WRANGLER_SEND_METRICS: "false",
  CLOUDFLARE_CF_FETCH_ENABLED: "false",
  XDG_CONFIG_HOME: configHome,
  ...(process.stdout.isTTY && !process.env.NO_COLOR ? { FORCE_COLOR: "1" } : {}),
};

/**
 * Runs `command`, keeping what it prints; `buffered`, printing nothing of it (the caller prints it whole), else
 * passing it on as it comes. `yielding`, at a lower priority (nice 10), so the e2e runs get the CPU first when they
 * need it.
 */
function run(
  command: string,
  args: readonly string[],
  buffered: boolean,
  yielding: boolean,
): Promise<{ status: number; output: string }> {
  return new Promise((resolve) => {
    const [file, ...rest] = yielding ? ["nice", "-n", "10", command, ...args] : [command, ...args];
    const child = spawn(file!, rest, { env, stdio: ["ignore", "pipe", "pipe"] });
    let output = "";
    const keep = (into: NodeJS.WriteStream) => (chunk: Buffer) => {
      output += chunk;
      if (!buffered) into.write(chunk);
    };
    child.stdout.on("data", keep(process.stdout));
    child.stderr.on("data", keep(process.stderr));
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

/**
 * What a failed run said of its failures: vitest's "Failed Tests" and "Unhandled Errors" sections, then its failed
 * files and tests, last, where a CI log cut to its end still names them; the whole output's end when it printed none
 * of them (the check, a crash).
 */
function failures(output: string): string {
  const lines = output.split("\n");
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the terminal's colour codes are what it removes.
  const plain = lines.map((line) => line.replace(/\x1b\[[0-9;]*m/g, ""));
  const sectionAt = plain.findIndex((line) => /⎯\s*(Failed Tests|Failed Suites|Unhandled Errors?) /.test(line));
  const failedLines = lines.filter((_, at) => /^\s*(FAIL|×)\s/.test(plain[at]!));
  if (sectionAt < 0 && failedLines.length === 0) return lines.slice(-80).join("\n");
  const section = sectionAt < 0 ? [] : lines.slice(sectionAt, sectionAt + 150);
  return [...section, "", ...failedLines.slice(0, 40)].join("\n");
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
/** Each failed run and what it printed. */
const failed: { name: string; output: string }[] = [];
/** Waits for a run printed as it goes, then says how it ended and when. */
async function streamed(name: string, running: Promise<{ status: number; output: string }>): Promise<void> {
  const from = Date.now();
  const { status, output } = await running;
  console.log(
    `\n── ${name}: ${status === 0 ? "passed" : "FAILED"} in ${Math.round((Date.now() - from) / 1000)} s ` +
      `(${Math.round((Date.now() - started) / 1000)} s since npm test started) ──`,
  );
  if (status !== 0) failed.push({ name, output });
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
  if (status !== 0) failed.push({ name, output });
}
for (const { name, output } of failed) process.stdout.write(`\n── ${name} failed: ──\n${failures(output)}\n`);
const seconds = Math.round((Date.now() - started) / 1000);
console.log(
  failed.length === 0
    ? `\nThe check and every project passed in ${seconds} s.`
    : `\nFAILED: ${failed.map(({ name }) => name).join(", ")} (${seconds} s).`,
);
process.exit(failed.length === 0 ? 0 : 1);
