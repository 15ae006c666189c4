/**
 * No line over 120 columns in the code Biome formats (biome.jsonc), which
 * its formatter keeps to but cannot make of a long comment; a string is left
 * whole (scripts/lib/line-length.ts says which lines may run long).
 */
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { MAX_COLUMNS, tooLong } from "./lib/line-length";

const ROOTS = ["src", "web", "test", "scripts", "bench", "client/src"];
const GENERATED = new Set([
  "worker-configuration.d.ts",
  "bench/worker-configuration.d.ts",
  "client/src/schema.ts",
  "client/src/schema-v2.ts",
]);

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
        if (tooLong(line)) over.push(`${file}:${index + 1}: ${line.length} columns`);
      });
  }
}
if (over.length > 0) {
  console.error(`${over.length} lines over ${MAX_COLUMNS} columns:\n${over.join("\n")}`);
  process.exit(1);
}
