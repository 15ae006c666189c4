/**
 * A worker on Miniflare: workerd serving on a loopback port without wrangler
 * dev's proxy (it, not the worker, would set the pace), through Miniflare's
 * entry worker as `npm start` serves it, and the first isolate on a second
 * port with nothing in front (`directOrigin`). The bundle is the one
 * `wrangler deploy` would upload. With `isolates` above one, that many copies
 * of the worker run side by side, each in its own isolate, all bound to the
 * first one's Durable Object namespace, D1 and KV: one service seen from
 * several locations.
 */
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { execFileSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { applyMigrations } from "../scripts/lib/local-state";
import { freePorts } from "../scripts/lib/ports";
import { mustRunWrangler } from "../scripts/lib/wrangler";

export interface BenchRuntime {
  /** The first isolate's address. */
  origin: string;
  /**
   * The first isolate on a socket of its own, with nothing in front: every
   * request to `origin` passes through Miniflare's entry worker first (a
   * JavaScript worker that copies the request and the response), which
   * Cloudflare does not run.
   */
  directOrigin: string;
  /** A request to the given isolate (0 is the one at `origin`). */
  fetchOn(isolate: number, path: string, init?: RequestInit): Promise<Response>;
  /** Peak resident memory of the workerd process since it started (Linux VmHWM). */
  peakResidentBytes(): number;
  /** CPU time (user and system, µs) the workerd process has used since it started. */
  cpuMicros(): number;
  /** The last error lines the worker logged. */
  recentErrors(): string[];
  /** Stops workerd and starts a fresh one on the same persisted state. */
  restart(): Promise<void>;
  dispose(): Promise<void>;
}

export type D1Like = Awaited<ReturnType<Miniflare["getD1Database"]>>;

export async function startBenchRuntime(config = "bench/wrangler.jsonc", isolates = 1): Promise<BenchRuntime> {
  const dir = mkdtempSync(join(tmpdir(), "store-orders-bench-"));
  const errors: string[] = [];
  const bundle = join(dir, "bundle");
  mustRunWrangler(["deploy", "--dry-run", "-c", config, "--outdir", bundle]);
  // The bundle is one module already: wrangler's module rules (which Miniflare 5 no longer takes) have nothing to do.
  const { modulesRules: _, ...workerOptions } = unstable_getMiniflareWorkerOptions(config).workerOptions;
  const script = readdirSync(bundle).find((file) => file.endsWith(".js"))!;
  // What webhook secrets are sealed under, one for every isolate, as `npm start` makes one in operator.env.
  const sealingKey = crypto.randomUUID();
  const worker = (index: number) => ({
    ...workerOptions,
    name: `isolate-${index}`,
    modules: true,
    scriptPath: join(bundle, script),
    modulesRoot: bundle,
    bindings: { ...(workerOptions.bindings as object), WEBHOOK_SECRETS_KEY: sealingKey },
    ...(index === 0 && { unsafeDirectSockets: [{ host: "127.0.0.1", port: directPort }] }),
    // The copies use the first isolate's objects: one counter of record per caller, as in production;
    // the first consumes the webhook queues (a queue has one consumer).
    ...(index > 0 && {
      queueConsumers: undefined,
      durableObjects: Object.fromEntries(
        Object.entries(workerOptions.durableObjects ?? {}).map(([binding, target]) => [
          binding,
          { ...(typeof target === "string" ? { className: target } : (target as object)), scriptName: "isolate-0" },
        ]),
      ),
    }),
  });
  // Two at once: asked one after the other, the second was once the first again.
  const [port, directPort] = (await freePorts(2)) as [number, number];
  const options = {
    workers: Array.from({ length: isolates }, (_, index) => worker(index)),
    host: "127.0.0.1",
    port,
    // Miniflare 5's name for the persisted state (a restart must find the orders seeded before it).
    resourcePersistencePath: join(dir, "state"),
    // D1's HTTP API, for the bench's other system (scripts/lib/d1-http-api.ts).
    unsafeLocalExplorer: true,
    // Every request writes a log line: none is printed, and the last error lines are kept so a failed row can say
    // why.
    handleStructuredLogs: ({ message }: { message: string }) => {
      if (!message.includes('"level":"error"')) return;
      errors.push(message);
      errors.splice(0, Math.max(0, errors.length - 5));
    },
  } as unknown as Parameters<typeof convertV4MiniflareOptions>[0];

  let mf = new Miniflare(convertV4MiniflareOptions(options));
  await mf.ready;
  await applyMigrations(await mf.getD1Database("DB"));

  const origin = `http://127.0.0.1:${port}`;
  return {
    origin,
    directOrigin: `http://127.0.0.1:${directPort}`,
    async fetchOn(isolate, path, init) {
      // Miniflare's Fetcher speaks undici's types; these are the same requests and responses.
      const target = (await mf.getWorker(`isolate-${isolate}`)) as unknown as {
        fetch(url: string, init?: RequestInit): Promise<Response>;
      };
      return target.fetch(`${origin}${path}`, init);
    },
    recentErrors: () => [...errors],
    peakResidentBytes: () => workerdPids().reduce((sum, pid) => sum + statusField(pid, "VmHWM"), 0),
    cpuMicros: () => workerdPids().reduce((sum, pid) => sum + cpuTicks(pid), 0) * (1e6 / CLOCK_TICKS),
    async restart() {
      await mf.dispose();
      mf = new Miniflare(convertV4MiniflareOptions(options));
      await mf.ready;
    },
    async dispose() {
      await mf.dispose();
      rmSync(dir, { recursive: true, force: true });
    },
  };
}

/** The kernel's unit of process CPU time, per second. */
const CLOCK_TICKS = Number(execFileSync("getconf", ["CLK_TCK"], { encoding: "utf8" }));

/** A process's /proc/<pid>/stat fields after its name, from the state on (proc(5), fields 3 onwards). */
function statFields(pid: number): string[] {
  const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
  return stat.slice(stat.lastIndexOf(")") + 2).split(" ");
}

/** User and system CPU time of a process, in clock ticks (utime and stime). */
function cpuTicks(pid: number): number {
  const fields = statFields(pid);
  return Number(fields[11]) + Number(fields[12]);
}

/** workerd processes this Node process started. */
function workerdPids(): number[] {
  const parentOf = (pid: number) => Number(statFields(pid)[1]);
  const pids: number[] = [];
  for (const entry of readdirSync("/proc")) {
    const pid = Number(entry);
    if (!Number.isInteger(pid)) continue;
    try {
      if (!readFileSync(`/proc/${pid}/comm`, "utf8").startsWith("workerd")) continue;
      for (let ancestor = parentOf(pid); ancestor > 1; ancestor = parentOf(ancestor)) {
        if (ancestor === process.pid) {
          pids.push(pid);
          break;
        }
      }
    } catch {
      // exited meanwhile
    }
  }
  return pids;
}

function statusField(pid: number, field: string): number {
  const match = new RegExp(`${field}:\\s+(\\d+) kB`).exec(readFileSync(`/proc/${pid}/status`, "utf8"));
  return Number(match?.[1] ?? 0) * 1024;
}
