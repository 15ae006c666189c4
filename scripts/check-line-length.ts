/**
 * No line over 120 columns in the code Biome formats (biome.jsonc), which
 * its formatter keeps to but cannot make of a long string or comment. One
 * exception: a test's name (`it("…", `), one string that is searched for and
 * reported whole, where breaking it would only scatter it.
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";

const MAX = 120;
const ROOTS = ["src", "web", "test", "scripts", "bench", "client/src"];
const GENERATED = new Set([
  "worker-configuration.d.ts",
  "bench/worker-configuration.d.ts",
  "client/src/schema.ts",
  "client/src/schema-v2.ts",
]);
const TEST_NAME = /^\s*(it|test|describe)(\.\w+(\([^)]*\))*)*\((["'`]).*\4,( async)? \(/;

function* sources(folder: string): Generator<string> {
  for (const entry of readdirSync(folder, { withFileTypes: true })) {
    const path = join(folder, entry.name);
    if (entry.isDirectory()) yield* sources(path);
    else if (/\.(ts|tsx|mjs)$/.test(entry.name) && !GENERATED.has(path)) yield path;
  }
}

const over: string[] = [];
for (const root of ROOTS) {
  for (const file of sources(root)) {
    readFileSync(file, "utf8")
      .split("\n")
      .forEach((line, index) => {
        if (line.length > MAX && !TEST_NAME.test(line)) over.push(`${file}:${index + 1}: ${line.length} columns`);
      });
  }
}
if (over.length > 0) {
  console.error(`${over.length} lines over ${MAX} columns:\n${over.join("\n")}`);
  process.exit(1);
}
