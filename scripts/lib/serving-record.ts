/**
 * Who runs a local state, recorded beside it. `npm start` and a keys command
 * that opens the state itself each hold it (`runtime.json`) while their
 * runtime is up, so no two runtimes open one object's files at once; and
 * `npm start` records where it serves (`serving.json`), so `npm run keys`
 * reaches the running service's operator API instead. A record whose
 * process is gone (a `kill -9`, a crash) is ignored.
 */
import { closeSync, existsSync, mkdirSync, openSync, readFileSync, rmSync, writeFileSync, writeSync } from "node:fs";
import { join } from "node:path";

interface ServingRecord {
  pid: number;
  port: number;
}

const stateRoot = (stateDir: string | undefined) => stateDir ?? ".wrangler/state";
const servingFile = (stateDir: string | undefined) => join(stateRoot(stateDir), "serving.json");

/**
 * Holds the state for this process's runtime (`who` says which, for the one refused); released when `release` is
 * called or the process exits. Throws, changing nothing, while a live process holds it.
 */
export function holdState(stateDir: string | undefined, who: string): () => void {
  mkdirSync(stateRoot(stateDir), { recursive: true });
  const file = join(stateRoot(stateDir), "runtime.json");
  for (;;) {
    try {
      // Created or not, in one step: of two at once, one holds it.
      const fd = openSync(file, "wx");
      writeSync(fd, JSON.stringify({ pid: process.pid, who }));
      closeSync(fd);
      break;
    } catch (error) {
      if ((error as NodeJS.ErrnoException).code !== "EEXIST") throw error;
      const holder = readHolder(file);
      // Held by this process already (npm start makes its demo key as a keys command does): its hold stands.
      if (holder?.pid === process.pid) return () => {};
      if (holder && processAlive(holder.pid))
        throw new Error(
          `The local state in ${stateRoot(stateDir)} is in use by ${holder.who} (process ${holder.pid}): try again ` +
            "once it has finished, or run keys commands while npm start serves it.",
        );
      rmSync(file, { force: true });
    }
  }
  const release = () => {
    if (readHolder(file)?.pid === process.pid) rmSync(file, { force: true });
  };
  process.on("exit", release);
  return release;
}

function readHolder(file: string): { pid: number; who: string } | undefined {
  try {
    const { pid, who } = JSON.parse(readFileSync(file, "utf8")) as { pid?: number; who?: string };
    return Number.isInteger(pid) ? { pid: pid!, who: String(who) } : undefined;
  } catch {
    return undefined;
  }
}

/** Records this process as the one serving the state on `port`; forgotten when the process exits. */
export function recordServing(stateDir: string | undefined, port: number): void {
  const file = servingFile(stateDir);
  writeFileSync(file, JSON.stringify({ pid: process.pid, port } satisfies ServingRecord));
  process.on("exit", () => {
    if (readRecord(file)?.pid === process.pid) rmSync(file, { force: true });
  });
}

/** The URL of the `npm start` serving the state, if one is running. */
export function servingUrl(stateDir: string | undefined): string | undefined {
  const record = readRecord(servingFile(stateDir));
  return record && processAlive(record.pid) ? `http://127.0.0.1:${record.port}` : undefined;
}

function readRecord(file: string): ServingRecord | undefined {
  if (!existsSync(file)) return undefined;
  try {
    const { pid, port } = JSON.parse(readFileSync(file, "utf8")) as Partial<ServingRecord>;
    return Number.isInteger(pid) && Number.isInteger(port) ? { pid: pid!, port: port! } : undefined;
  } catch {
    return undefined;
  }
}

/** Whether process `pid` runs and is this user's. */
export function processAlive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    // Gone, or (EPERM) another user's process now holds the id: never npm start's, and never sent the token.
    return false;
  }
}
