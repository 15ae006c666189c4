import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runDeploy } from "../../scripts/deploy";
import { ALWAYS_SENT } from "../../src/header-catalogue";

/**
 * `npm run deploy:production` end to end, with nothing deployed: a fake
 * wrangler (test/support/fake-wrangler.mjs) records the commands and answers
 * like wrangler, and a local server stands in for the deployment, answering
 * as the new version only when the version override names it (and it is
 * deployed). Each case runs the release (the command's own code) in a
 * configured copy of the project: a git repository whose wrangler.toml has
 * its ids filled in. The wrangler failure's own line is wrangler's output,
 * which goes to this process's terminal.
 */
const ROOT = resolve(".");
const WORKER = "store-orders-production";
const OLD = "0f0f0f0f-old0-4000-8000-000000000001";
const NEW = "1a1a1a1a-new0-4000-8000-000000000002";

interface FakeState {
  worker: string;
  newVersion: string;
  split: Record<string, number>;
  tags: Record<string, string>;
  failOn: string[];
  calls: string[][];
}

/** How the stand-in deployment behaves: the new version broken from some percentage on, or overrides ignored. */
let behaviour: { newBrokenFrom?: number; ignoreOverrides?: boolean } = {};
let statePath = "";
let server: Server;
let port = 0;

const readState = (): FakeState => JSON.parse(readFileSync(statePath, "utf8")) as FakeState;

beforeAll(async () => {
  server = createServer((request, response) => {
    const split = readState().split;
    const override = /="([^"]+)"/.exec(String(request.headers["cloudflare-workers-version-overrides"] ?? ""))?.[1];
    const serving = Object.entries(split).sort(([, a], [, b]) => b - a)[0]![0];
    const version = !behaviour.ignoreOverrides && override !== undefined && override in split ? override : serving;
    const broken = version === NEW && behaviour.newBrokenFrom !== undefined && (split[NEW] ?? 0) >= behaviour.newBrokenFrom;
    const headers: Record<string, string> = { "Content-Type": "application/json", "X-Worker-Version": version };
    for (const name of ALWAYS_SENT) headers[name] ??= name === "X-RateLimit-Resource" ? "minute" : "1";
    const send = (status: number, body: unknown, extra: Record<string, string> = {}) => {
      response.writeHead(status, { ...headers, ...extra });
      response.end(JSON.stringify(body));
    };
    const path = request.url ?? "";
    if (broken) return send(500, { code: "internal_error", message: "broken release", status: 500 });
    if (path === "/v1/openapi.json" || path === "/v2/openapi.json") return send(200, { openapi: "3.1.0", paths: { "/store/orders": {}, "/store/orders/{orderId}": {} } });
    if (!request.headers.authorization) return send(401, { code: "missing_api_key", message: "no key", status: 401 }, { "WWW-Authenticate": 'Bearer realm="store-orders"' });
    if (request.method === "GET" && path === "/v1/store/orders") return send(200, [{ id: 1, status: "pending", complete: false }]);
    if (request.method === "GET" && path.startsWith("/v2/store/orders?")) return send(200, { data: [{ id: 1, status: "pending", complete: false }], nextCursor: null });
    if (request.method === "GET" && path === "/v2/store/orders/1") return send(200, { id: 1, status: "pending", complete: false });
    if (request.method === "DELETE") return send(404, { code: "order_not_found", message: "none", status: 404 });
    return send(404, { code: "not_found", message: "none", status: 404 });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  port = (server.address() as { port: number }).port;
});
afterAll(() => new Promise<void>((done) => server.close(() => done())));

const repos: string[] = [];
afterEach(() => {
  for (const dir of repos.splice(0)) rmSync(dir, { recursive: true, force: true });
  behaviour = {};
});

const gitIn = (dir: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=tests", "-c", "user.email=tests@example.com", ...args], { cwd: dir, encoding: "utf8" }).trim();

/** A configured copy of the project (its ids filled in), committed, with the fake's state: the old version serving 100%. */
function configuredCopy(edit: (toml: string) => string = (toml) => toml): { dir: string; commit: string } {
  const dir = mkdtempSync(join(tmpdir(), "store-orders-release-"));
  repos.push(dir);
  const toml = readFileSync("wrangler.toml", "utf8")
    .replace(/REPLACE_WITH_\w+_D1_DATABASE_ID/g, "11111111-2222-4333-8444-555555555555")
    .replace(/REPLACE_WITH_\w+_KV_NAMESPACE_ID/g, "0123456789abcdef0123456789abcdef");
  gitIn(dir, "init", "-q");
  writeFileSync(join(dir, "wrangler.toml"), toml);
  gitIn(dir, "add", ".");
  gitIn(dir, "commit", "-qm", "the release before");
  const deployedCommit = gitIn(dir, "rev-parse", "HEAD");
  writeFileSync(join(dir, "wrangler.toml"), edit(toml));
  writeFileSync(join(dir, "CHANGES"), "the new release\n");
  gitIn(dir, "add", ".");
  gitIn(dir, "commit", "-qm", "Release 42: faster pages");
  statePath = join(dir, "fake-wrangler.json");
  const state: FakeState = { worker: WORKER, newVersion: NEW, split: { [OLD]: 100 }, tags: { [OLD]: deployedCommit }, failOn: [], calls: [] };
  writeFileSync(statePath, JSON.stringify(state));
  // The fake's state file is not part of the release: ignored, so the tree stays clean.
  writeFileSync(join(dir, ".git", "info", "exclude"), "fake-wrangler.json\n");
  return { dir, commit: gitIn(dir, "rev-parse", "HEAD") };
}

/** The release, as `npm run deploy:production -- <args>` runs it, in this process (wrangler is the fake, a process per call as the real one). */
async function deploy(dir: string, ...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  process.env.STORE_ORDERS_WRANGLER = join(ROOT, "test/support/fake-wrangler.mjs");
  process.env.FAKE_WRANGLER_STATE = statePath;
  const argv = ["production", "--base-url", `http://127.0.0.1:${port}/v1`, "--wait", "0", "--propagation-wait", "0", "--key", "so_test_key", ...args];
  const status = await runDeploy(argv, { cwd: dir, out: (line) => void (stdout += `${line}\n`), err: (line) => void (stderr += `${line}\n`) });
  return { status, stdout, stderr };
}

/** The wrangler calls that change something, in order (the read-only look-ups left out). */
const changes = () =>
  readState()
    .calls.filter(([first, second]) => !(first === "deployments" && second === "status") && !(first === "versions" && second === "view"))
    .map((call) => call.filter((arg) => !arg.startsWith("Release 42")).join(" "));

describe("npm run deploy:production, as a gradual release", () => {
  it("migrates, uploads tagged with the commit, deploys at 0%, smoke-checks that version only, then ramps 10%, 50%, 100% with a smoke check at each", async () => {
    const { dir, commit } = configuredCopy();
    const result = await deploy(dir);
    expect(result.status, result.stderr + result.stdout).toBe(0);
    expect(changes()).toEqual([
      "d1 migrations apply DB --remote --env production",
      `versions upload --env production --tag ${commit} --message`,
      `versions deploy ${NEW}@0% ${OLD}@100% --env production --yes --message`,
      `versions deploy ${NEW}@10% ${OLD}@90% --env production --yes --message`,
      `versions deploy ${NEW}@50% ${OLD}@50% --env production --yes --message`,
      `versions deploy ${NEW}@100% --env production --yes --message`,
    ]);
    expect(result.stdout.match(/PASS GET \/store\/orders/g)).toHaveLength(4);
    expect(readState().split).toEqual({ [NEW]: 100 });
    expect(result.stdout).toContain(`Released to production`);
  });

  it("takes --steps, and fails at 0% when the new version fails its smoke check: no client ever had it, 100% stays on the old version", async () => {
    const { dir } = configuredCopy();
    behaviour = { newBrokenFrom: 0 };
    const result = await deploy(dir, "--steps", "25,100");
    expect(result.status).toBe(1);
    expect(result.stderr.trim().split("\n")).toEqual([`FAILED: the smoke checks failed at 0%: expected 200, got 500. Restored 100% of production to ${OLD}.`]);
    expect(changes().filter((call) => call.startsWith("versions deploy"))).toEqual([
      `versions deploy ${NEW}@0% ${OLD}@100% --env production --yes --message`,
      `versions deploy ${OLD}@100% --env production --yes --message rollback: the smoke checks failed at 0%: expected 200, got 500`,
    ]);
    expect(readState().split).toEqual({ [OLD]: 100 });
  });

  it("rolls back to the old version when the smoke check fails at 50%", async () => {
    const { dir } = configuredCopy();
    behaviour = { newBrokenFrom: 50 };
    const result = await deploy(dir);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`FAILED: the smoke checks failed at 50%`);
    expect(result.stderr).toContain(`Restored 100% of production to ${OLD}.`);
    expect(readState().split).toEqual({ [OLD]: 100 });
  });

  it("rolls back when wrangler fails mid-way", async () => {
    const { dir } = configuredCopy();
    writeFileSync(statePath, JSON.stringify({ ...readState(), failOn: [`${NEW}@50%`] }));
    const result = await deploy(dir);
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe(`FAILED: Ramping to 50% failed (wrangler exit 1). Restored 100% of production to ${OLD}.`);
    expect(readState().split).toEqual({ [OLD]: 100 });
  });

  it("fails, and rolls back, when the version override is not applied: the old version answering never passes for the new one", async () => {
    const { dir } = configuredCopy();
    behaviour = { ignoreOverrides: true };
    const result = await deploy(dir);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(`answered by version ${OLD}, not ${NEW}: the version override was not applied`);
    expect(result.stdout).toContain("the version override is not applied yet");
    expect(readState().split).toEqual({ [OLD]: 100 });
  });

  it("refuses a Durable Object migration change without --all-at-once, and with it deploys plainly and smoke-checks", async () => {
    const addClass = (toml: string) => toml.replace(/(\[\[env\.production\.migrations\]\]\ntag = "v1"\nnew_sqlite_classes = \["RateLimiter"\]\n)/, '$1\n[[env.production.migrations]]\ntag = "v2"\nnew_sqlite_classes = ["Another"]\n');
    const { dir } = configuredCopy(addClass);
    expect(readFileSync(join(dir, "wrangler.toml"), "utf8")).toContain('tag = "v2"');
    const refused = await deploy(dir);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(/Durable Object migrations in wrangler.toml changed since the deployed version .* --all-at-once/);
    expect(changes()).toEqual([]);

    const plain = await deploy(dir, "--all-at-once");
    expect(plain.status, plain.stderr).toBe(0);
    expect(changes()).toEqual(["d1 migrations apply DB --remote --env production", "deploy --env production --message"]);
    expect(plain.stdout).toContain("PASS GET /store/orders");
  });

  it("--dry-run prints the whole plan in order and runs nothing", async () => {
    const { dir } = configuredCopy();
    const result = await deploy(dir, "--dry-run");
    expect(result.status, result.stderr).toBe(0);
    const plan = result.stdout.split("\n").filter((line) => line.startsWith("== "));
    expect(plan.map((line) => line.replace(/ --message .*/, ""))).toEqual([
      "== Applying D1 migrations to production: wrangler d1 migrations apply DB --remote --env production",
      expect.stringMatching(/^== Uploading the new version: wrangler versions upload --env production --tag [0-9a-f]{40}$/),
      "== Deploying the new version at 0%: wrangler versions deploy <new version>@0% <current version>@100% --env production --yes",
      `== 0%: smoke checks against http://127.0.0.1:${port}/v1, ${WORKER}="<new version>" only`,
      "== Ramping to 10%: wrangler versions deploy <new version>@10% <current version>@90% --env production --yes",
      `== 10%: smoke checks against http://127.0.0.1:${port}/v1, ${WORKER}="<new version>" only`,
      "== Ramping to 50%: wrangler versions deploy <new version>@50% <current version>@50% --env production --yes",
      `== 50%: smoke checks against http://127.0.0.1:${port}/v1, ${WORKER}="<new version>" only`,
      "== Ramping to 100%: wrangler versions deploy <new version>@100% --env production --yes",
      `== 100%: smoke checks against http://127.0.0.1:${port}/v1, ${WORKER}="<new version>" only`,
      "== On any failure from here: wrangler versions deploy <current version>@100% --env production --yes",
    ]);
    expect(readState().calls).toEqual([]);
  });

  it("refuses placeholders and a dirty tree before anything runs", async () => {
    const { dir } = configuredCopy();
    writeFileSync(join(dir, "CHANGES"), "edited, not committed\n");
    const dirty = await deploy(dir);
    expect(dirty.status).toBe(1);
    expect(dirty.stderr).toContain("the working tree has uncommitted changes");
    gitIn(dir, "checkout", "CHANGES");
    writeFileSync(join(dir, "wrangler.toml"), readFileSync("wrangler.toml", "utf8"));
    gitIn(dir, "commit", "-qam", "placeholders again");
    const placeholders = await deploy(dir, "--dry-run");
    expect(placeholders.status).toBe(1);
    expect(placeholders.stderr).toContain("Not deploying production: wrangler.toml still has placeholder ids");
    expect(readState().calls).toEqual([]);
  });
});
