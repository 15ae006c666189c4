/**
 * `npm run smoke -- --base-url URL --key KEY [--version-override <worker>=<version id>]`:
 * checks a running deployment against the contract before it is promoted
 * (scripts/lib/smoke-checks.ts). Exit 1 when a check fails, 2 for bad arguments.
 */
import { parseArgs } from "node:util";
import { describeResults, runSmokeChecks, type SmokeTarget } from "./lib/smoke-checks";

const USAGE =
  "Usage: npm run smoke -- --base-url https://host/v1 --key <API key> [--version-override <worker>=<version id>]";

function options(): SmokeTarget {
  try {
    const { values } = parseArgs({
      options: { "base-url": { type: "string" }, key: { type: "string" }, "version-override": { type: "string" } },
      strict: true,
    });
    const baseUrl = values["base-url"]?.replace(/\/+$/, "");
    if (!baseUrl || !values.key || !URL.canParse(baseUrl)) throw new Error("--base-url (a URL) and --key are required");
    const override = values["version-override"];
    const [worker, id] = override?.split("=") ?? [];
    if (override !== undefined && (!worker || !id))
      throw new Error("--version-override takes <worker name>=<version id>");
    return { baseUrl, key: values.key, ...(worker && id && { version: { worker, id } }) };
  } catch (error) {
    console.error(`${(error as Error).message}\n${USAGE}`);
    process.exit(2);
  }
}

const target = options();
console.log(`Smoke checks against ${target.baseUrl}${target.version ? `, version ${target.version.id} only` : ""}`);
const results = await runSmokeChecks(target);
for (const line of describeResults(results)) console.log(line);
const failures = results.filter((result) => result.problem !== undefined).length;
console.log(
  failures === 0 ? `All ${results.length} checks passed.` : `${failures} of ${results.length} checks failed.`,
);
process.exit(failures === 0 ? 0 : 1);
