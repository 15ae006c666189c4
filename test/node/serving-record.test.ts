import { existsSync, mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { spawn, spawnSync } from "node:child_process";
import { afterEach, describe, expect, it } from "vitest";
import { holdState, recordServing, servingUrl } from "../../scripts/lib/serving-record";

/** How `npm run keys` finds the `npm start` serving a local state (scripts/lib/serving-record.ts). */
const dirs: string[] = [];
const stateDir = () => {
  const dir = mkdtempSync(join(tmpdir(), "serving-record-"));
  dirs.push(dir);
  return dir;
};
afterEach(() => {
  for (const dir of dirs.splice(0)) rmSync(dir, { recursive: true, force: true });
});

describe("the serving record", () => {
  it("leads to the process that serves the state, on its port", () => {
    const dir = stateDir();
    expect(servingUrl(dir)).toBeUndefined();
    recordServing(dir, 8799);
    expect(servingUrl(dir)).toBe("http://127.0.0.1:8799");
  });

  it("is ignored when its process is gone (a kill -9 leaves it behind), or when it is not a record", () => {
    const dir = stateDir();
    const gone = spawnSync(process.execPath, ["-e", "process.stdout.write(String(process.pid))"]).stdout.toString();
    writeFileSync(join(dir, "serving.json"), JSON.stringify({ pid: Number(gone), port: 8799 }));
    expect(servingUrl(dir)).toBeUndefined();
    writeFileSync(join(dir, "serving.json"), "{not json");
    expect(servingUrl(dir)).toBeUndefined();
  });
});

describe("the hold on a local state", () => {
  it("lets one runtime at a time open it: another live process's hold refuses, its release or death frees it", async () => {
    const dir = stateDir();
    const release = holdState(dir, "npm start");
    // Its own runtimes after one another (npm start makes its demo key as a keys command does) go on under its hold.
    holdState(dir, "a keys command")();
    expect(existsSync(join(dir, "runtime.json"))).toBe(true);
    release();
    expect(existsSync(join(dir, "runtime.json"))).toBe(false);
    // Another process holding it: refused while it lives, taken once it is gone (a kill -9 leaves its file behind).
    const other = spawn(process.execPath, ["-e", "setTimeout(() => {}, 60_000)"]);
    writeFileSync(join(dir, "runtime.json"), JSON.stringify({ pid: other.pid, who: "npm start" }));
    expect(() => holdState(dir, "a keys command")).toThrow(/in use by npm start \(process \d+\)/);
    const exited = new Promise((resolve) => other.on("exit", resolve));
    other.kill("SIGKILL");
    await exited;
    holdState(dir, "a keys command")();
  });
});
