import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
// @ts-expect-error: a plain ES module of the tests, without types.
import { answerAsWrangler } from "../support/fake-wrangler.mjs";

/**
 * The deploy's stand-in for wrangler (test/support/fake-wrangler.mjs) held to the wrangler the project installs: each
 * entry it writes to WRANGLER_OUTPUT_FILE_PATH, which the release reads for the version it made, has the fields
 * wrangler's own `writeOutput` call writes for that command, read from wrangler's source as installed, so an upgrade
 * that changes them fails here before a release reads a field that is no longer written.
 */
const WRANGLER = readFileSync(
  join(createRequire(import.meta.url).resolve("wrangler/package.json"), "..", "wrangler-dist", "cli.js"),
  "utf8",
);

/** The top-level fields of wrangler's `writeOutput({ type: "<type>", ... })` call for one command. */
function fieldsWranglerWrites(type: string): string[] {
  const start = new RegExp(`writeOutput\\(\\{\\s*type: "${type}",`).exec(WRANGLER)?.index;
  if (start === undefined) throw new Error(`wrangler's source writes no "${type}" entry`);
  const fields: string[] = [];
  let depth = 0;
  for (const line of WRANGLER.slice(start).split("\n")) {
    // The call's own braces are two deep: `writeOutput({`.
    if (depth === 2) fields.push(/^\s*(\w+)(?::|,|$)/.exec(line)?.[1] ?? "");
    depth += (line.match(/[{(]/g) ?? []).length - (line.match(/[})]/g) ?? []).length;
    if (depth <= 0) break;
  }
  return fields.filter(Boolean).sort();
}

function entriesOfTheFake(...calls: string[][]): Record<string, unknown>[] {
  const folder = mkdtempSync(join(tmpdir(), "fake-wrangler-"));
  try {
    const state = join(folder, "state.json");
    const output = join(folder, "output.jsonl");
    writeFileSync(
      state,
      JSON.stringify({ worker: "store-orders", newVersion: "v-new", split: {}, tags: {}, calls: [], failOn: [] }),
    );
    writeFileSync(output, "");
    for (const args of calls) answerAsWrangler(args, { FAKE_WRANGLER_STATE: state, WRANGLER_OUTPUT_FILE_PATH: output });
    return readFileSync(output, "utf8")
      .trim()
      .split("\n")
      .map((line) => JSON.parse(line) as Record<string, unknown>);
  } finally {
    rmSync(folder, { recursive: true, force: true });
  }
}

describe("the fake wrangler's output file", () => {
  it("writes a version upload with exactly the fields wrangler writes", () => {
    const [session, upload] = entriesOfTheFake(["versions", "upload", "--env", "staging", "--tag", "abc"]);
    expect(Object.keys(session!).sort()).toEqual(fieldsWranglerWrites("wrangler-session"));
    expect(session).toMatchObject({
      wrangler_version: createRequire(import.meta.url)("wrangler/package.json").version,
    });
    expect(Object.keys(upload!).sort()).toEqual(fieldsWranglerWrites("version-upload"));
    expect(upload).toMatchObject({ type: "version-upload", version: 1, wrangler_environment: "staging" });
  });

  it("writes a deploy with exactly the fields wrangler writes", () => {
    const [deploy] = entriesOfTheFake(["deploy", "--env", "production", "--tag", "abc"]);
    expect(Object.keys(deploy!).sort()).toEqual(fieldsWranglerWrites("deploy"));
    expect(deploy).toMatchObject({ type: "deploy", version: 1, wrangler_environment: "production" });
  });
});
