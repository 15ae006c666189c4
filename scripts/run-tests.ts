/**
 * `npm test`'s tests (after `npm run check`): the workers and node projects
 * in one vitest, the e2e project in another, at the same time. Vitest runs a
 * project whose files go one at a time (e2e: each starts its own wrangler) as
 * a group after all the others, so in one vitest the real processes' waits
 * (a wrangler starting, a browser loading) left the cores idle for minutes;
 * side by side, they fill them. The workers and node run's output is shown
 * as it comes, the e2e run's once it ends (two streams interleaved line by
 * line would be unreadable). Fails when either run fails. Arguments are
 * passed to both (`npm test -- --reporter=dot`).
 */
import { spawn } from "node:child_process";

interface Run {
  name: string;
  projects: string[];
  live: boolean;
}

const RUNS: Run[] = [
  { name: "workers and node", projects: ["workers", "node"], live: true },
  { name: "e2e", projects: ["e2e"], live: false },
];

function start(run: Run, extra: string[]): Promise<number> {
  const args = ["vitest", "run", ...run.projects.flatMap((project) => ["--project", project]), ...extra];
  const child = spawn("npx", args, { stdio: run.live ? "inherit" : ["ignore", "pipe", "pipe"], env: { ...process.env, FORCE_COLOR: process.env.FORCE_COLOR ?? (process.stdout.isTTY ? "1" : "0") } });
  const held: Buffer[] = [];
  child.stdout?.on("data", (chunk: Buffer) => held.push(chunk));
  child.stderr?.on("data", (chunk: Buffer) => held.push(chunk));
  return new Promise((resolve) => {
    child.on("close", (code, signal) => {
      if (!run.live) {
        process.stdout.write(`\n== vitest: ${run.name} ==\n`);
        process.stdout.write(Buffer.concat(held));
      }
      resolve(code ?? (signal ? 1 : 0));
    });
  });
}

const extra = process.argv.slice(2);
const codes = await Promise.all(RUNS.map((run) => start(run, extra)));
for (const [index, code] of codes.entries()) {
  if (code !== 0) process.stderr.write(`npm test: the ${RUNS[index]!.name} tests failed (vitest exited ${code}).\n`);
}
process.exit(codes.some((code) => code !== 0) ? 1 : 0);
