import { execFile } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
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

/** Redocly's report of each file, in order: with several files it prints one JSON report after another. */
const redocly = async (paths: string[]) => {
  const { stdout } = await run("redocly", ["lint", ...paths, "--config", "redocly.yaml", "--format", "json"]);
  return JSON.parse(`[${stdout.trim().replace(/\}\s*\{(?=\s*"totals")/g, "},{")}]`) as RedoclyReport[];
};
const spectral = (paths: string[]) =>
  run("spectral", ["lint", ...paths, "--ruleset", ".spectral.yaml", "--fail-severity", "warn"]);

function documentFile(env: (typeof DEPLOYED_ENVIRONMENTS)[number] | undefined, version: VersionName): string {
  const path = join(dir, `openapi-${env ?? "local"}-${version}.json`);
  writeFileSync(path, JSON.stringify(servedDocument(env, version), null, 2));
  return path;
}

const documents = [undefined, ...DEPLOYED_ENVIRONMENTS].flatMap((env) =>
  (["v1", "v2"] as const).map((version) => [env ?? "local", env, version] as const),
);

// Each linter runs once over every document (a process each, not one per document); each document is then judged alone.
let reports: { redocly: RedoclyReport[]; spectral: { status: number; output: string } };
beforeAll(async () => {
  const paths = documents.map(([, env, version]) => documentFile(env, version));
  const [redoclyReport, spectralResult] = await Promise.all([redocly(paths), spectral(paths)]);
  reports = { redocly: redoclyReport, spectral: spectralResult };
});

describe.each(documents.map((document, index) => [...document, index] as const))(
  "the OpenAPI document served by %s, %s",
  (name, _, version, index) => {
    const file = `openapi-${name}-${version}.json`;

    it("passes Redocly's recommended rules with no errors and no warnings", () => {
      expect(reports.redocly).toHaveLength(documents.length);
      expect(reports.redocly[index]!.problems).toEqual([]);
      expect(reports.redocly[index]!.totals).toMatchObject({ errors: 0, warnings: 0 });
    });

    it("passes Spectral's spectral:oas rules with no errors and no warnings", () => {
      expect(reports.spectral.output, reports.spectral.output).not.toContain(file);
      expect(reports.spectral.output).toContain("No results with a severity of 'warn' or higher found!");
      expect(reports.spectral.status).toBe(0);
    });
  },
);

describe("the linters", () => {
  it("do fail a document that breaks their rules", async () => {
    const broken = servedDocument() as { paths: Record<string, Record<string, Record<string, unknown>>> };
    delete broken.paths["/store/orders"]!.get!.tags;
    delete (broken as unknown as { info: Record<string, unknown> }).info.license;
    const path = join(dir, "broken.json");
    writeFileSync(path, JSON.stringify(broken));
    const [spectralResult, redoclyReport] = await Promise.all([spectral([path]), redocly([path])]);
    expect(spectralResult.output).toContain("operation-tags");
    expect(spectralResult.status).not.toBe(0);
    expect(redoclyReport[0]!.problems.map((problem) => problem.ruleId)).toContain("info-license");
  });
});
