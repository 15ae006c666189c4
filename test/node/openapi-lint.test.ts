import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { DEPLOYED_ENVIRONMENTS } from "../../scripts/lib/environments";
import { servedDocument, type VersionName } from "../support/served-document";

/**
 * Two third-party linters read the document as its users' tools will. The
 * workers test (openapi.test.ts) checks that what is served is this document.
 */
const dir = mkdtempSync(join(tmpdir(), "store-orders-openapi-"));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// No network here: Redocly must neither report usage nor look for a newer version.
const quiet = { ...process.env, REDOCLY_TELEMETRY: "off", REDOCLY_SUPPRESS_UPDATE_NOTICE: "true", NO_COLOR: "1" };

function run(command: string, args: string[]): Promise<{ status: number; stdout: string; output: string }> {
  return new Promise((resolve) => {
    execFile(`node_modules/.bin/${command}`, args, { encoding: "utf8", env: quiet }, (error, stdout, stderr) =>
      resolve({ status: error ? Number(error.code ?? 1) : 0, stdout, output: `${stdout}\n${stderr}` }),
    );
  });
}

interface RedoclyReport {
  totals: { errors: number; warnings: number };
  problems: { ruleId: string; message: string }[];
}

const redocly = async (path: string) =>
  JSON.parse((await run("redocly", ["lint", path, "--config", "redocly.yaml", "--format", "json"])).stdout) as RedoclyReport;

function documentFile(env: (typeof DEPLOYED_ENVIRONMENTS)[number] | undefined, version: VersionName): string {
  const path = join(dir, `openapi-${env ?? "local"}-${version}.json`);
  writeFileSync(path, JSON.stringify(servedDocument(env, version), null, 2));
  return path;
}

const documents = [undefined, ...DEPLOYED_ENVIRONMENTS].flatMap((env) => (["v1", "v2"] as const).map((version) => [env ?? "local", env, version] as const));

describe.each(documents)("the OpenAPI document served by %s, %s", (_, env, version) => {
  it("passes Redocly's recommended rules with no errors and no warnings", async () => {
    const report = await redocly(documentFile(env, version));
    expect(report.problems).toEqual([]);
    expect(report.totals).toMatchObject({ errors: 0, warnings: 0 });
  });

  it("passes Spectral's spectral:oas rules with no errors and no warnings", async () => {
    const result = await run("spectral", ["lint", documentFile(env, version), "--ruleset", ".spectral.yaml", "--fail-severity", "warn"]);
    expect(result.output, result.output).toContain("No results with a severity of 'warn' or higher found!");
    expect(result.status).toBe(0);
  });
});

describe("the linters", () => {
  it("do fail a document that breaks their rules", async () => {
    const broken = servedDocument() as { paths: Record<string, Record<string, Record<string, unknown>>> };
    delete broken.paths["/store/orders"]!.get!.tags;
    delete (broken as unknown as { info: Record<string, unknown> }).info.license;
    const path = join(dir, "broken.json");
    writeFileSync(path, JSON.stringify(broken));
    const spectral = await run("spectral", ["lint", path, "--ruleset", ".spectral.yaml", "--fail-severity", "warn"]);
    expect(spectral.output).toContain("operation-tags");
    expect(spectral.status).not.toBe(0);
    expect((await redocly(path)).problems.map((problem) => problem.ruleId)).toContain("info-license");
  });
});
