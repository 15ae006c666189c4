/**
 * Where `npm start` serves a local state from, recorded beside the state
 * (`serving.json`), so `npm run keys` reaches the running service's operator
 * API instead of opening the same files in a second runtime. A record whose
 * process is gone (a `kill -9`, a crash) is ignored.
 */
import { existsSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { join } from "node:path";

interface ServingRecord {
  pid: number;
  port: number;
}

const servingFile = (stateDir: string | undefined) => join(stateDir ?? ".wrangler/state", "serving.json");

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
  return record && alive(record.pid) ? `http://127.0.0.1:${record.port}` : undefined;
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

function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    // Gone, or (EPERM) another user's process now holds the id: never npm start's, and never sent the token.
    return false;
  }
}
