import { readFileSync } from "node:fs";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { REQUIRED_SECRETS } from "../../scripts/deploy";

/**
 * The GitHub workflows (.github/workflows/) held to what they call: the README's test command and the project's own
 * release scripts, the Node `.nvmrc` names, one release of an environment at a time, production behind its protected
 * environment, and every secret they pass named in docs/operations.md. actionlint (in `npm run check`) checks the
 * files' syntax and expressions; this checks that they still mean what the docs say.
 */
interface Step {
  uses?: string;
  run?: string;
  with?: Record<string, unknown>;
  env?: Record<string, string>;
}
interface Job {
  needs?: string;
  if?: string;
  uses?: string;
  with?: Record<string, string>;
  secrets?: string;
  container?: string;
  environment?: string;
  concurrency?: { group: string; "cancel-in-progress": boolean };
  steps?: Step[];
}
interface Workflow {
  on: Record<string, unknown>;
  jobs: Record<string, Job>;
}

const workflow = (name: string) => parse(readFileSync(`.github/workflows/${name}`, "utf8")) as Workflow;
const release = workflow("release.yml");
const deploy = workflow("deploy.yml");
const scripts = (JSON.parse(readFileSync("package.json", "utf8")) as { scripts: Record<string, string> }).scripts;
/** A GitHub expression as the workflow writes it, `${{ ... }}`. */
const expression = (inner: string) => `$\{{ ${inner} }}`;
const runs = (job: Job) => (job.steps ?? []).flatMap((step) => (step.run ? [step.run] : []));

describe("the release workflow", () => {
  it("runs the README's install and test commands on every pull request, in Debian, on .nvmrc's Node", () => {
    expect(release.on).toHaveProperty("pull_request");
    const test = release.jobs.test!;
    expect(test.container).toMatch(/^debian:/);
    expect(runs(test)[0]).toMatch(/apt-get install .*\bchromium\b/);
    expect(runs(test).slice(-2)).toEqual(["npm ci", "npm test"]);
    expect(readFileSync("README.md", "utf8")).toContain("npm test");
    const node = test.steps!.find((step) => step.uses?.startsWith("actions/setup-node@"));
    expect(node?.with).toMatchObject({ "node-version-file": ".nvmrc" });
  });

  it("deploys staging from main and production from a version tag or a manual run, each after the tests", () => {
    expect(release.on).toMatchObject({ push: { branches: ["main"], tags: ["v*"] } });
    expect(release.on).toHaveProperty("workflow_dispatch");
    const { staging, production } = release.jobs;
    for (const [job, environment] of [
      [staging!, "staging"],
      [production!, "production"],
    ] as const) {
      expect(job).toMatchObject({ needs: "test", uses: "./.github/workflows/deploy.yml", with: { environment } });
      expect(job.secrets).toBe("inherit");
    }
    expect(staging!.if).toBe("github.event_name == 'push' && github.ref == 'refs/heads/main'");
    expect(production!.if).toBe(
      "startsWith(github.ref, 'refs/tags/v') || " +
        "(github.event_name == 'workflow_dispatch' && github.ref == 'refs/heads/main')",
    );
  });

  it("releases one environment at a time, through its GitHub environment, by the project's own ramp", () => {
    expect(deploy.on).toMatchObject({ workflow_call: { inputs: { environment: { required: true } } } });
    const job = deploy.jobs.deploy!;
    const environment = expression("inputs.environment");
    expect(job.environment).toBe(environment);
    expect(job.concurrency).toEqual({ group: `deploy-${environment}`, "cancel-in-progress": false });
    const checkout = job.steps!.find((step) => step.uses?.startsWith("actions/checkout@"));
    expect(checkout?.with).toMatchObject({ "fetch-depth": 0 });
    expect(runs(job)).toEqual(["npm ci", `npm run deploy:${environment}`]);
    for (const name of ["staging", "production"]) expect(scripts).toHaveProperty(`deploy:${name}`);
  });

  it("passes the secrets a release reads, each named in the operators' docs", () => {
    const passed = Object.keys(deploy.jobs.deploy!.steps!.find((step) => step.run?.startsWith("npm run deploy"))!.env!);
    expect(passed).toEqual(expect.arrayContaining(["CLOUDFLARE_API_TOKEN", "CLOUDFLARE_ACCOUNT_ID", "SMOKE_API_KEY"]));
    expect(passed).toEqual(expect.arrayContaining(REQUIRED_SECRETS));
    const operations = readFileSync("docs/operations.md", "utf8");
    const section = operations.slice(operations.indexOf("### Releasing from GitHub"));
    for (const name of passed) expect(section, name).toContain(`\`${name}\``);
  });
});
