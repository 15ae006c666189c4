import { execFileSync } from "node:child_process";
import { EventEmitter } from "node:events";
import { mkdtempSync, readFileSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { createServer, type Server } from "node:http";
import { tmpdir } from "node:os";
import { join, resolve } from "node:path";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { runDeploy } from "../../scripts/deploy";
import type { Wrangler } from "../../scripts/lib/wrangler";
import { freePort } from "../../scripts/lib/ports";
import { ALWAYS_SENT } from "../../src/framework/header-catalogue";
import { dataPoint } from "../../src/framework/middleware/request-analytics";
import { engineRow, runEngineSql, tableOf } from "../support/analytics-engine-sql";
import { answerAsWrangler, databaseInfo } from "../support/fake-wrangler.mjs";

/**
 * `npm run deploy:production` end to end, with nothing deployed: a fake
 * wrangler (test/support/fake-wrangler.mjs) records the commands and answers
 * like wrangler, and a local server stands in for the deployment, answering
 * as the new version only when the version override names it (and it is
 * deployed). Each case runs the release (the command's own code) in a
 * configured copy of the project: a git repository whose wrangler.jsonc names
 * an operator's own domain. The fake answers in this process (a process per call
 * was most of this file's time), except in the first case, which runs it
 * as the release runs wrangler: a process per call. The wrangler failure's
 * own line is wrangler's output, which goes to this process's terminal. A
 * second local server stands in for Analytics Engine's SQL API: it runs
 * the health gate's query (through an evaluator of the engine's SQL) over
 * the data points the versions would have written in the step's window,
 * split as the fake's traffic is.
 */
const ROOT = resolve(".");
const WORKER = "store-orders-production";
const OLD = "0f0f0f0f-old0-4000-8000-000000000001";
const NEW = "1a1a1a1a-new0-4000-8000-000000000002";

interface FakeState {
  worker: string;
  exists?: boolean;
  secrets: string[];
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

/**
 * The real traffic the SQL API stand-in reports for a step's window: `total`
 * requests split as the deployment is; the previous version answers 0.2% 500s
 * in 20-119 ms; the new one the same unless, from `from` percent on, it has
 * `errorRatio` 500s or is `slowerMs` slower. `answer` breaks the API itself.
 */
let traffic: {
  total: number;
  from?: number;
  errorRatio?: number;
  slowerMs?: number;
  answer?: "unreachable" | "500" | "not JSON";
} = { total: 1_000 };
let credentials = true;
let analytics: Server;
let analyticsPort = 0;
/** The SQL the stand-in was sent, in order. */
const queries: string[] = [];
/** The read replication changes the stand-in was sent, with how many wrangler calls the release had made by then. */
const replication: { uuid: string; body: unknown; afterCalls: number }[] = [];
const ACCOUNT = "0123abcd0123abcd0123abcd0123abcd";
const TOKEN = "analytics-read-token-for-tests";

function windowRows(now: number) {
  const { split, newVersion } = readState();
  return Object.entries(split).flatMap(([version, percentage]) => {
    const count = Math.round((traffic.total * percentage) / 100);
    const degraded = version === newVersion && percentage >= (traffic.from ?? 0);
    const errorRatio = degraded ? (traffic.errorRatio ?? 0.002) : 0.002;
    return Array.from({ length: count }, (_, i) => {
      const status = i < Math.round(count * errorRatio) ? 500 : 200;
      const durationMs = 20 + (i % 100) + (degraded ? (traffic.slowerMs ?? 0) : 0);
      const point = dataPoint({
        index: "key_1",
        versionId: version,
        route: "/v1/store/orders",
        method: "GET",
        status,
        outcome: status >= 500 ? "error" : "admitted",
        plan: "pro",
        colo: "AMS",
        durationMs,
        bytes: 10,
      });
      return engineRow(point, now - 200);
    });
  });
}

const readState = (): FakeState => JSON.parse(readFileSync(statePath, "utf8")) as FakeState;

beforeAll(async () => {
  server = createServer((request, response) => {
    const split = readState().split;
    const override = /="([^"]+)"/.exec(String(request.headers["cloudflare-workers-version-overrides"] ?? ""))?.[1];
    const serving = Object.entries(split).sort(([, a], [, b]) => b - a)[0]![0];
    const version = !behaviour.ignoreOverrides && override !== undefined && override in split ? override : serving;
    const releasing = readState().newVersion;
    const broken =
      version === releasing &&
      behaviour.newBrokenFrom !== undefined &&
      (split[releasing] ?? 0) >= behaviour.newBrokenFrom;
    const headers: Record<string, string> = { "Content-Type": "application/json", "X-Worker-Version": version };
    for (const name of ALWAYS_SENT) headers[name] ??= name === "X-RateLimit-Resource" ? "minute" : "1";
    const send = (status: number, body: unknown, extra: Record<string, string> = {}) => {
      response.writeHead(status, { ...headers, ...extra });
      response.end(JSON.stringify(body));
    };
    const path = request.url ?? "";
    if (broken) return send(500, { code: "internal_error", message: "broken release", status: 500 });
    if (path === "/v1/openapi.json" || path === "/v2/openapi.json")
      return send(200, { openapi: "3.1.0", paths: { "/store/orders": {}, "/store/orders/{orderId}": {} } });
    if (!request.headers.authorization)
      return send(
        401,
        { code: "missing_api_key", message: "no key", status: 401 },
        { "WWW-Authenticate": 'Bearer realm="store-orders"' },
      );
    if (request.method === "GET" && path === "/v1/store/orders")
      return send(200, [{ id: 1, status: "pending", complete: false }]);
    if (request.method === "GET" && path.startsWith("/v2/store/orders?"))
      return send(200, { data: [{ id: "1", status: "pending", complete: false }], nextCursor: null });
    if (request.method === "GET" && path === "/v2/store/orders/1")
      return send(200, { id: "1", status: "pending", complete: false });
    if (request.method === "DELETE") return send(404, { code: "order_not_found", message: "none", status: 404 });
    return send(404, { code: "not_found", message: "none", status: 404 });
  });
  await new Promise<void>((done) => server.listen(0, "127.0.0.1", done));
  port = (server.address() as { port: number }).port;

  analytics = createServer(async (request, response) => {
    let sql = "";
    for await (const chunk of request) sql += chunk;
    queries.push(sql);
    // Each connection closed after its answer: the deploys run in this process, and one reusing a connection the
    // server was closing as idle (a test later, on a busy machine) failed with ECONNRESET.
    const reply = (status: number, body: string) => (
      response.writeHead(status, { "Content-Type": "application/json", Connection: "close" }), response.end(body)
    );
    const database = new RegExp(`^/client/v4/accounts/${ACCOUNT}/d1/database/([0-9a-f-]+)$`).exec(request.url ?? "");
    if (request.method === "PUT" && database) {
      replication.push({ uuid: database[1]!, body: JSON.parse(sql), afterCalls: readState().calls.length });
      // Cloudflare's "Update D1 Database" answer: the database's record, with its new mode.
      return reply(
        200,
        JSON.stringify({
          errors: [],
          messages: [],
          success: true,
          result: { ...databaseInfo("store-orders-production"), uuid: database[1], read_replication: { mode: "auto" } },
        }),
      );
    }
    if (request.method !== "POST" || request.url !== `/client/v4/accounts/${ACCOUNT}/analytics_engine/sql`)
      return reply(404, '{"errors":["no such route"]}');
    if (request.headers.authorization !== `Bearer ${TOKEN}`) return reply(401, '{"errors":["authentication error"]}');
    if (traffic.answer === "500") return reply(500, '{"errors":["internal error"]}');
    if (traffic.answer === "not JSON") return reply(200, "<html>maintenance</html>");
    if (tableOf(sql) !== "store_orders_requests_production")
      return reply(422, `{"errors":["unknown table ${tableOf(sql)}"]}`);
    const now = Date.now();
    reply(200, JSON.stringify(runEngineSql(sql, windowRows(now), now)));
  });
  await new Promise<void>((done) => analytics.listen(0, "127.0.0.1", done));
  analyticsPort = (analytics.address() as { port: number }).port;
});
afterAll(async () => {
  await new Promise<void>((done) => server.close(() => done()));
  await new Promise<void>((done) => analytics.close(() => done()));
});

/** Whether the release runs the fake as a process per call, as it runs wrangler, rather than in this process. */
let asProcesses = false;
const inProcess: Wrangler = {
  run: (args) => answerAsWrangler(args, process.env),
  inTerminal(args, env = {}) {
    const { status, stdout, stderr } = answerAsWrangler(args, { ...process.env, ...env });
    process.stdout.write(stdout);
    process.stderr.write(stderr);
    return status;
  },
};

const repos: string[] = [];
afterEach(() => {
  asProcesses = false;
  for (const dir of repos.splice(0)) rmSync(dir, { recursive: true, force: true });
  behaviour = {};
  replication.length = 0;
  traffic = { total: 1_000 };
  credentials = true;
  queries.length = 0;
});

const gitIn = (dir: string, ...args: string[]) =>
  execFileSync("git", ["-c", "user.name=tests", "-c", "user.email=tests@example.com", ...args], {
    cwd: dir,
    encoding: "utf8",
  }).trim();

/** The secrets a deployed Worker has set. */
const SECRETS = ["WEBHOOK_SECRETS_KEY", "CONSOLE_SESSION_KEY", "OPERATOR_TOKEN"];

/** The committed configuration with an operator's own domain in place of the example ones. */
const configured = () => readFileSync("wrangler.jsonc", "utf8").replaceAll(".example.com", ".acme-store.dev");

/**
 * A configured copy of the project, committed, with the fake's state: the old version serving 100%; `before`, the
 * configuration of the release before (wrangler.toml for one from before the move to wrangler.jsonc).
 */
function configuredCopy(
  edit: (config: string) => string = (config) => config,
  before: { file: string; text: string } = { file: "wrangler.jsonc", text: configured() },
): { dir: string; commit: string } {
  const dir = mkdtempSync(join(tmpdir(), "store-orders-release-"));
  repos.push(dir);
  gitIn(dir, "init", "-q");
  writeFileSync(join(dir, before.file), before.text);
  gitIn(dir, "add", ".");
  gitIn(dir, "commit", "-qm", "the release before");
  const deployedCommit = gitIn(dir, "rev-parse", "HEAD");
  if (before.file !== "wrangler.jsonc") gitIn(dir, "rm", "-q", before.file);
  writeFileSync(join(dir, "wrangler.jsonc"), edit(configured()));
  writeFileSync(join(dir, "CHANGES"), "the new release\n");
  gitIn(dir, "add", ".");
  gitIn(dir, "commit", "-qm", "Release 42: faster pages");
  statePath = join(dir, "fake-wrangler.json");
  const state: FakeState = {
    worker: WORKER,
    newVersion: NEW,
    split: { [OLD]: 100 },
    tags: { [OLD]: deployedCommit },
    secrets: SECRETS,
    failOn: [],
    calls: [],
  };
  writeFileSync(statePath, JSON.stringify(state));
  // The fake's state file is not part of the release: ignored, so the tree stays clean.
  writeFileSync(join(dir, ".git", "info", "exclude"), "fake-wrangler.json\n");
  return { dir, commit: gitIn(dir, "rev-parse", "HEAD") };
}

/** The configuration with one more Durable Object class declared. */
const addClass = (config: string) => {
  const lane = '"WebhookLane": { "type": "durable-object", "storage": "sqlite" }';
  return config.replace(lane, `${lane},\n    "Another": { "type": "durable-object", "storage": "sqlite" }`);
};

/** Given to deploy(), the release runs with no smoke key (none can exist before a first release). */
const WITHOUT_KEY = "(without a key)";

/**
 * The release, as `npm run deploy:production -- <args>` runs it, in this process (wrangler is the fake); `onLine` sees
 * each line it prints.
 */
async function deploy(
  dir: string,
  ...args: (string | ((line: string) => void) | EventEmitter)[]
): Promise<{ status: number; stdout: string; stderr: string }> {
  let stdout = "";
  let stderr = "";
  const onLine = args.find((arg) => typeof arg === "function") ?? (() => {});
  const signals = args.find((arg) => arg instanceof EventEmitter);
  process.env.STORE_ORDERS_WRANGLER = join(ROOT, "test/support/fake-wrangler.mjs");
  process.env.FAKE_WRANGLER_STATE = statePath;
  // The health gate's credentials, and the SQL API's stand-in where wrangler would read Cloudflare's API from.
  for (const [name, value] of [
    ["CLOUDFLARE_ACCOUNT_ID", ACCOUNT],
    ["CLOUDFLARE_API_TOKEN", TOKEN],
  ] as const) {
    if (credentials) process.env[name] = value;
    else delete process.env[name];
  }
  process.env.CLOUDFLARE_API_BASE_URL =
    traffic.answer === "unreachable"
      ? `http://127.0.0.1:${await freePort()}/client/v4`
      : `http://127.0.0.1:${analyticsPort}/client/v4`;
  const strings = args.filter((arg): arg is string => typeof arg === "string");
  const given = strings.filter((arg) => arg !== WITHOUT_KEY);
  const argv = [
    "production",
    "--base-url",
    `http://127.0.0.1:${port}/v1`,
    "--wait",
    "0",
    "--propagation-wait",
    "0",
    ...(strings.includes(WITHOUT_KEY) ? [] : ["--key", "so_test_key"]),
    ...given,
  ];
  const out = (line: string) => {
    stdout += `${line}\n`;
    onLine(line);
  };
  const status = await runDeploy(argv, {
    cwd: dir,
    out,
    err: (line) => void (stderr += `${line}\n`),
    ...(signals && { signals }),
    ...(!asProcesses && { wrangler: inProcess }),
  });
  return { status, stdout, stderr };
}

/**
 * The wrangler calls that change something, in order (the read-only look-ups left out; a release's own message
 * shortened to its flag).
 */
const changes = () =>
  readState()
    .calls.filter(
      ([first, second]) =>
        !(first === "deployments" && second === "status") &&
        !(first === "versions" && second === "view") &&
        !(first === "secret" && second === "list") &&
        !(first === "d1" && second === "info"),
    )
    .map((call) => call.map((arg) => arg.replace(/^--message=(Release|Next release).*$/, "--message")).join(" "));

/** Commits a change to the configured copy and makes the fake's next version `id`: the next release. */
function nextRelease(dir: string, subject: string, id: string): string {
  writeFileSync(join(dir, "CHANGES"), `${subject}\n`);
  gitIn(dir, "commit", "-qam", subject);
  writeFileSync(statePath, JSON.stringify({ ...readState(), newVersion: id, calls: [] }));
  return gitIn(dir, "rev-parse", "HEAD");
}

/** The deploy's temporary folders left in the system's temporary directory. */
const leftovers = () => readdirSync(tmpdir()).filter((name) => name.startsWith("store-orders-deploy-"));

describe("npm run deploy:production, as a gradual release", () => {
  it("migrates, uploads tagged with the commit, deploys at 0%, smoke-checks that version only, then ramps 10%, 50%, 100% with a smoke check at each", async () => {
    asProcesses = true;
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
    expect(result.stderr.trim().split("\n")).toEqual([
      `FAILED: the smoke checks failed at 0%: expected 200, got 500. Restored 100% of production to ${OLD}.`,
    ]);
    expect(changes().filter((call) => call.startsWith("versions deploy"))).toEqual([
      `versions deploy ${NEW}@0% ${OLD}@100% --env production --yes --message`,
      `versions deploy ${OLD}@100% --env production --yes --message=rollback: the smoke checks failed at ` +
        `0%: expected ` +
        `` +
        `` +
        `200, got 500`,
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
    expect(result.stderr.trim()).toBe(
      `FAILED: Ramping to 50% failed (wrangler exit 1). Restored 100% of production to ${OLD}.`,
    );
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

  it("refuses a change to the Durable Object classes without --all-at-once, and with it deploys plainly and smoke-checks", async () => {
    const { dir } = configuredCopy(addClass);
    expect(readFileSync(join(dir, "wrangler.jsonc"), "utf8")).toContain('"Another": { "type": "durable-object"');
    const refused = await deploy(dir);
    expect(refused.status).toBe(1);
    expect(refused.stderr).toMatch(
      /Durable Object classes in wrangler.jsonc changed since the deployed version .* --all-at-once/,
    );
    expect(changes()).toEqual([]);

    const plain = await deploy(dir, "--all-at-once");
    expect(plain.status, plain.stderr).toBe(0);
    expect(changes()).toEqual([
      "d1 migrations apply DB --remote --env production",
      `deploy --env production --tag ${gitIn(dir, "rev-parse", "HEAD")} --message`,
    ]);
    // Smoke-checked as the version it deployed, read from wrangler's output file.
    expect(plain.stdout).toContain(
      `== 100%: smoke checks against http://127.0.0.1:${port}/v1, ${WORKER}="${NEW}" only`,
    );
    expect(plain.stdout).toContain("PASS GET /store/orders");
  });

  it("--dry-run reads what is deployed, prints the whole plan in order, changes nothing and leaves no temporary folder", async () => {
    const { dir } = configuredCopy();
    const before = leftovers();
    const result = await deploy(dir, "--dry-run", "--wait", "60");
    expect(result.status, result.stderr).toBe(0);
    // The query each gate would run, and nothing sent.
    expect(result.stdout).toContain(
      `   FROM store_orders_requests_production\n   WHERE timestamp > NOW() - INTERVAL '60' SECOND AND blob1 IN ` +
        `('<new version>', '${OLD}')`,
    );
    expect(queries).toEqual([]);
    const plan = result.stdout.split("\n").filter((line) => line.startsWith("== "));
    expect(plan.map((line) => line.replace(/ --message=.*/, ""))).toEqual([
      "== Applying D1 migrations to production: wrangler d1 migrations apply DB --remote --env production",
      expect.stringMatching(
        /^== Uploading the new version: wrangler versions upload --env production --tag [0-9a-f]{40}$/,
      ),
      `== Deploying the new version at 0%: wrangler versions deploy <new version>@0% ${OLD}@100% --env production ` +
        `--yes`,
      `== 0%: smoke checks against http://127.0.0.1:${port}/v1, ${WORKER}="<new version>" only`,
      `== Ramping to 10%: wrangler versions deploy <new version>@10% ${OLD}@90% --env production --yes`,
      `== 10%: health gate: the new version against ${OLD} over the step's 60 s (Analytics Engine SQL API)`,
      `== 10%: smoke checks against http://127.0.0.1:${port}/v1, ${WORKER}="<new version>" only`,
      `== Ramping to 50%: wrangler versions deploy <new version>@50% ${OLD}@50% --env production --yes`,
      `== 50%: health gate: the new version against ${OLD} over the step's 60 s (Analytics Engine SQL API)`,
      `== 50%: smoke checks against http://127.0.0.1:${port}/v1, ${WORKER}="<new version>" only`,
      "== Ramping to 100%: wrangler versions deploy <new version>@100% --env production --yes",
      `== 100%: smoke checks against http://127.0.0.1:${port}/v1, ${WORKER}="<new version>" only`,
      `== On any failure from here: wrangler versions deploy ${OLD}@100% --env production --yes`,
    ]);
    expect(changes()).toEqual([]);
    expect(leftovers()).toEqual(before);
  });

  it("--dry-run refuses what a real release would: an untagged deployment, a split one", async () => {
    const { dir } = configuredCopy();
    writeFileSync(statePath, JSON.stringify({ ...readState(), tags: {} }));
    const untagged = await deploy(dir, "--dry-run");
    expect(untagged.status).toBe(1);
    expect(untagged.stderr).toMatch(/no commit tag .* --compare-migrations-with <commit>, or .* --all-at-once/);
    writeFileSync(statePath, JSON.stringify({ ...readState(), split: { [OLD]: 50, [NEW]: 50 } }));
    const split = await deploy(dir, "--dry-run");
    expect(split.status).toBe(1);
    expect(split.stderr).toContain("is already split between versions");
    expect(changes()).toEqual([]);
  });

  it("releases three times in a row from a production never released by this script: all at once (tagged), then gradually, twice", async () => {
    const { dir } = configuredCopy();
    writeFileSync(statePath, JSON.stringify({ ...readState(), tags: {} }));
    expect((await deploy(dir)).status).toBe(1);
    const first = await deploy(dir, "--all-at-once");
    expect(first.status, first.stderr).toBe(0);
    expect(readState().tags[NEW]).toBe(gitIn(dir, "rev-parse", "HEAD"));

    const THIRD = "2b2b2b2b-new0-4000-8000-000000000003";
    const secondCommit = nextRelease(dir, "Next release: v2 pages", THIRD);
    const second = await deploy(dir);
    expect(second.status, second.stderr).toBe(0);
    expect(changes()).toContain(`versions deploy ${THIRD}@0% ${NEW}@100% --env production --yes --message`);
    expect(readState()).toMatchObject({ split: { [THIRD]: 100 }, tags: { [THIRD]: secondCommit } });

    const FOURTH = "3c3c3c3c-new0-4000-8000-000000000004";
    nextRelease(dir, "Next release: events", FOURTH);
    const third = await deploy(dir);
    expect(third.status, third.stderr).toBe(0);
    expect(changes()).toContain(`versions deploy ${FOURTH}@0% ${THIRD}@100% --env production --yes --message`);
    expect(readState().split).toEqual({ [FOURTH]: 100 });
  });

  it("takes an untagged production gradually, through 0% and its smoke check, when the operator names the commit it was deployed from", async () => {
    const { dir } = configuredCopy();
    const deployedFrom = readState().tags[OLD]!;
    writeFileSync(statePath, JSON.stringify({ ...readState(), tags: {} }));
    const result = await deploy(dir, "--compare-migrations-with", deployedFrom.slice(0, 12));
    expect(result.status, result.stderr).toBe(0);
    expect(changes()[2]).toBe(`versions deploy ${NEW}@0% ${OLD}@100% --env production --yes --message`);
    expect(result.stdout).toContain(`== 0%: smoke checks against http://127.0.0.1:${port}/v1, ${WORKER}="${NEW}" only`);
    expect((await deploy(dir, "--compare-migrations-with", "HEAD~1;touch")).stderr).toContain(
      "--compare-migrations-with takes a commit id",
    );
  });

  it("leaves 100% on a version that passed its smoke check, whichever step fails", async () => {
    const failures: { name: string; failOn?: string; brokenFrom?: number; unhealthyFrom?: number }[] = [
      { name: "the migrations", failOn: "d1 migrations" },
      { name: "the upload", failOn: "versions upload" },
      { name: "0%", failOn: `${NEW}@0%` },
      { name: "the smoke at 0%", brokenFrom: 0 },
      { name: "10%", failOn: `${NEW}@10%` },
      { name: "the smoke at 10%", brokenFrom: 10 },
      { name: "the health at 10%", unhealthyFrom: 10 },
      { name: "50%", failOn: `${NEW}@50%` },
      { name: "the health at 50%", unhealthyFrom: 50 },
      { name: "100%", failOn: `${NEW}@100%` },
      { name: "the smoke at 100%", brokenFrom: 100 },
    ];
    for (const failure of failures) {
      const { dir } = configuredCopy();
      writeFileSync(statePath, JSON.stringify({ ...readState(), failOn: failure.failOn ? [failure.failOn] : [] }));
      behaviour = { newBrokenFrom: failure.brokenFrom };
      traffic = {
        total: 1_000,
        ...(failure.unhealthyFrom !== undefined && { from: failure.unhealthyFrom, errorRatio: 0.05 }),
      };
      const result = await deploy(dir);
      expect(result.status, failure.name).toBe(1);
      expect(readState().split, failure.name).toEqual({ [OLD]: 100 });
    }
  });

  it("puts 100% back on the previous version when the release is interrupted mid-ramp (SIGINT, SIGTERM), and says so", async () => {
    // The process's signals, stood in for: in this process they would reach the test runner too.
    const signals = new EventEmitter();
    for (const signal of ["SIGINT", "SIGTERM"] as const) {
      const { dir } = configuredCopy();
      const result = await deploy(dir, "--wait", "30", signals, (line) => {
        if (line.startsWith("== Ramping to 10%")) setTimeout(() => signals.emit(signal), 50);
      });
      expect(result.status, signal).toBe(1);
      expect(result.stderr.trim()).toBe(`FAILED: interrupted by ${signal}. Restored 100% of production to ${OLD}.`);
      expect(readState().split).toEqual({ [OLD]: 100 });
      expect(changes().filter((call) => call.includes("@50%"))).toEqual([]);
    }
    expect(signals.listenerCount("SIGINT") + signals.listenerCount("SIGTERM")).toBe(0);
  });

  it("reads a tag that is not a commit id as no tag, so it never reaches git", async () => {
    const { dir } = configuredCopy();
    writeFileSync(statePath, JSON.stringify({ ...readState(), tags: { [OLD]: "--output=/tmp/owned" } }));
    const result = await deploy(dir);
    expect(result.status).toBe(1);
    expect(result.stdout).toContain(`serving now: ${OLD} (no commit tag)`);
    expect(result.stderr).toContain("no commit tag");
  });

  it("passes a commit subject that starts with '-' as the message, never as an option", async () => {
    const { dir } = configuredCopy();
    gitIn(dir, "commit", "--allow-empty", "-qm", "--yes --dry-run");
    const result = await deploy(dir);
    expect(result.status, result.stderr).toBe(0);
    const upload = readState().calls.find(([first, second]) => first === "versions" && second === "upload")!;
    expect(upload).toContain("--message=--yes --dry-run");
  });

  it("refuses to roll back an all-at-once release that changed the Durable Object classes, saying why and what to do by hand", async () => {
    const { dir } = configuredCopy(addClass);
    behaviour = { newBrokenFrom: 100 };
    const result = await deploy(dir, "--all-at-once");
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(
      /^FAILED: the smoke checks failed at 100%: .*Not rolled back to .*Durable Object classes.*By hand/,
    );
    expect(changes().filter((call) => call.startsWith("versions deploy"))).toEqual([]);
  });

  it("refuses the example domains and a dirty tree before anything runs", async () => {
    const { dir } = configuredCopy();
    writeFileSync(join(dir, "CHANGES"), "edited, not committed\n");
    const dirty = await deploy(dir);
    expect(dirty.status).toBe(1);
    expect(dirty.stderr).toContain("the working tree has uncommitted changes");
    gitIn(dir, "checkout", "CHANGES");
    writeFileSync(join(dir, "wrangler.jsonc"), readFileSync("wrangler.jsonc", "utf8"));
    gitIn(dir, "commit", "-qam", "the example domains again");
    const examples = await deploy(dir, "--dry-run");
    expect(examples.status).toBe(1);
    expect(examples.stderr).toContain(
      "Not deploying production: wrangler.jsonc still names the example domains in route store-orders.example.com, " +
        "BASE_URL, STAGING_BASE_URL, PRODUCTION_BASE_URL.",
    );
    expect(readState().calls).toEqual([]);
  });

  it("refuses, before changing anything, a Worker that lacks a required secret, saying how to set it", async () => {
    const { dir } = configuredCopy();
    writeFileSync(statePath, JSON.stringify({ ...readState(), secrets: ["OPERATOR_TOKEN", "WEBHOOK_SECRETS_KEY"] }));
    const result = await deploy(dir, "--dry-run");
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      "Not deploying production: the Worker lacks the secret CONSOLE_SESSION_KEY; set it with " +
        "`npx wrangler secret put <NAME> --env production`",
    );
    expect(changes()).toEqual([]);
  });

  it("takes a release whose previous configuration was wrangler.toml (no exports) all at once only", async () => {
    const toml = 'name = "store-orders"\n[[env.production.migrations]]\ntag = "v1"\nnew_sqlite_classes = ["Account"]\n';
    const { dir } = configuredCopy(undefined, { file: "wrangler.toml", text: toml });
    const refused = await deploy(dir);
    expect(refused.stderr).toMatch(/Durable Object classes in wrangler.jsonc changed since the deployed version/);
    expect(changes()).toEqual([]);
    const plain = await deploy(dir, "--all-at-once");
    expect(plain.status, plain.stderr).toBe(0);
  });
});

describe("npm run deploy:production, the first release", () => {
  const secrets = { WEBHOOK_SECRETS_KEY: "sealing-key", CONSOLE_SESSION_KEY: "session-key", OPERATOR_TOKEN: "ops:t" };
  /** A configured copy whose Worker was never released: nothing deployed, no secrets. */
  function neverReleased(): string {
    const { dir } = configuredCopy();
    writeFileSync(statePath, JSON.stringify({ ...readState(), exists: false, split: {}, tags: {}, secrets: [] }));
    return dir;
  }
  const withSecrets = async <T>(given: Record<string, string>, run: () => Promise<T>): Promise<T> => {
    for (const [name, value] of Object.entries(given)) process.env[name] = value;
    try {
      return await run();
    } finally {
      for (const name of Object.keys(given)) delete process.env[name];
    }
  };

  it("provisions with an upload that serves nothing, migrates, turns read replication on, then deploys and smoke-checks", async () => {
    const dir = neverReleased();
    const before = leftovers();
    const result = await withSecrets(secrets, () => deploy(dir, "--first-release"));
    expect(result.status, result.stderr + result.stdout).toBe(0);
    const commit = gitIn(dir, "rev-parse", "HEAD");
    expect(changes().map((call) => call.replace(/--secrets-file \S+/, "--secrets-file <file>"))).toEqual([
      `versions upload --env production --tag ${commit} --message --secrets-file <file>`,
      "d1 migrations apply DB --remote --env production",
      `deploy --env production --tag ${commit} --message`,
    ]);
    // The secrets went with the upload, from a file only its owner could read, which is gone.
    expect(readState().secrets.sort()).toEqual(Object.keys(secrets).sort());
    expect((readState() as FakeState & { secretsFileMode: string }).secretsFileMode).toBe("600");
    expect(leftovers()).toEqual(before);
    // Read replication, once the database exists (after the migrations) and before any traffic (the deploy).
    const calls = readState().calls.map((call) => call.slice(0, 2).join(" "));
    expect(replication).toEqual([
      { uuid: databaseInfo("").uuid, body: { read_replication: { mode: "auto" } }, afterCalls: expect.any(Number) },
    ]);
    expect(calls.slice(0, replication[0]!.afterCalls).at(-1)).toBe("d1 info");
    expect(calls.indexOf("d1 migrations")).toBeLessThan(replication[0]!.afterCalls);
    expect(calls.indexOf("deploy --env")).toBeGreaterThanOrEqual(replication[0]!.afterCalls);
    expect(result.stdout).toContain(
      `== 100%: smoke checks against http://127.0.0.1:${port}/v1, ${WORKER}="${NEW}" only`,
    );
    expect(result.stdout).toContain("Released to production");
  });

  it("refuses, before any call that changes something, when a required secret is not in its environment", async () => {
    const dir = neverReleased();
    const result = await withSecrets({ WEBHOOK_SECRETS_KEY: "sealing-key" }, () => deploy(dir, "--first-release"));
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      "Not deploying production: a first release takes its secrets from this environment, and CONSOLE_SESSION_KEY " +
        "is not set",
    );
    expect(changes()).toEqual([]);
  });

  it("says that a first release that fails its smoke check stays deployed, with nothing to go back to", async () => {
    const dir = neverReleased();
    behaviour = { newBrokenFrom: 100 };
    const result = await withSecrets(secrets, () => deploy(dir, "--first-release"));
    expect(result.status).toBe(1);
    expect(result.stderr).toMatch(/^FAILED: the smoke checks failed at 100%: .*served nothing before this release/);
    expect(changes().filter((call) => call.startsWith("versions deploy"))).toEqual([]);
  });

  it("is only ever the operator's word: no deployment found without --first-release is refused, and so is the flag on a Worker that serves", async () => {
    const dir = neverReleased();
    const unsaid = await withSecrets(secrets, () => deploy(dir));
    expect(unsaid.status).toBe(1);
    expect(unsaid.stderr).toContain(
      "Not deploying production: wrangler finds no deployment of store-orders-production in this account. If this " +
        "is its first release (or finishes one that stopped), run it again with --first-release; otherwise check " +
        "CLOUDFLARE_ACCOUNT_ID and the name in wrangler.jsonc.",
    );
    expect(changes()).toEqual([]);
    const serving = configuredCopy().dir;
    const said = await withSecrets(secrets, () => deploy(serving, "--first-release"));
    expect(said.stderr).toContain(
      `Not deploying production: --first-release, but store-orders-production serves ${OLD}`,
    );
    expect(changes()).toEqual([]);
  });

  it("finishes a first release that stopped after its upload, when run again", async () => {
    const dir = neverReleased();
    writeFileSync(statePath, JSON.stringify({ ...readState(), failOn: ["d1 migrations apply"] }));
    const stopped = await withSecrets(secrets, () => deploy(dir, "--first-release"));
    expect(stopped.status).toBe(1);
    expect(readState().exists).toBe(true);
    writeFileSync(statePath, JSON.stringify({ ...readState(), failOn: [], calls: [] }));
    const finished = await withSecrets(secrets, () => deploy(dir, "--first-release"));
    expect(finished.status, finished.stderr).toBe(0);
    expect(changes().map((call) => call.split(" ").slice(0, 2).join(" "))).toEqual([
      "versions upload",
      "d1 migrations",
      "deploy --env",
    ]);
  });

  it("runs without a smoke key, which cannot exist yet: the checks that need none, and says how to run the rest", async () => {
    const dir = neverReleased();
    const result = await withSecrets(secrets, () => deploy(dir, "--first-release", WITHOUT_KEY));
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain("PASS a call without a key is 401 missing_api_key with a Bearer challenge");
    expect(result.stdout).not.toContain("GET /store/orders lists orders");
    expect(result.stdout).toContain("No key can exist before a first release");
  });

  it("--dry-run prints the first release's plan and changes nothing", async () => {
    const dir = neverReleased();
    const result = await withSecrets(secrets, () => deploy(dir, "--first-release", "--dry-run"));
    expect(result.status, result.stderr).toBe(0);
    const plan = result.stdout
      .split("\n")
      .filter((line) => line.startsWith("== "))
      .map((line) =>
        line
          .replace(" --message=Release 42: faster pages", "")
          .replace(/--secrets-file \S+/, "--secrets-file <file>")
          .replace(/[0-9a-f]{40}/, "<commit>"),
      );
    expect(plan).toEqual([
      "== Provisioning production (D1, KV, Durable Object classes) with its secrets (WEBHOOK_SECRETS_KEY, " +
        "CONSOLE_SESSION_KEY, OPERATOR_TOKEN), serving nothing: wrangler versions upload --env production --tag " +
        "<commit> --secrets-file <file>",
      "== Applying D1 migrations to production: wrangler d1 migrations apply DB --remote --env production",
      "== Turning D1 read replication on for store-orders-production: PUT /accounts/<account>/d1/database/<uuid>",
      "== Deploying store-orders-production: its routes and cron from now on: wrangler deploy --env production --tag " +
        "<commit>",
      `== 100%: smoke checks against http://127.0.0.1:${port}/v1, ${WORKER}="<new version>" only`,
    ]);
    expect(changes()).toEqual([]);
    expect(replication).toEqual([]);
  });
});

describe("npm run deploy:production, promoted by health", () => {
  const gateLines = (stdout: string) => stdout.split("\n").filter((line) => /^ {3}new [\d,]+ requests/.test(line));

  it("ramps a healthy version to 100%, printing the comparison at each split step from the versions' real traffic", async () => {
    const { dir } = configuredCopy();
    const result = await deploy(dir);
    expect(result.status, result.stderr + result.stdout).toBe(0);
    expect(gateLines(result.stdout)).toEqual([
      "   new 100 requests, 5xx 0.00%, p99 118 ms; previous 900 requests, 5xx 0.22%, p99 118 ms: healthy",
      "   new 500 requests, 5xx 0.20%, p99 118 ms; previous 500 requests, 5xx 0.20%, p99 118 ms: healthy",
    ]);
    // One query a split step, over the step's window, naming both versions; sent with the token to the account's SQL
    // API.
    expect(queries).toHaveLength(2);
    expect(queries[0]).toMatch(
      new RegExp(
        `FROM store_orders_requests_production\\nWHERE timestamp > NOW\\(\\) - INTERVAL '\\d+' SECOND AND blob1 IN ` +
          `\\('${NEW}', '${OLD}'\\)`,
      ),
    );
    expect(readState().split).toEqual({ [NEW]: 100 });
  });

  it("rolls back a version with more 5xx at the step where it shows, before it takes more traffic", async () => {
    const { dir } = configuredCopy();
    traffic = { total: 1_000, from: 50, errorRatio: 0.03 };
    const result = await deploy(dir);
    expect(result.status).toBe(1);
    expect(result.stderr.trim()).toBe(
      `FAILED: the health gate failed at 50%: its 5xx ratio 3.00% is above 0.50% (max of 2x the previous 0.20% and ` +
        `0.50%). Restored 100% of production to ${OLD}.`,
    );
    expect(gateLines(result.stdout)).toHaveLength(2);
    expect(
      changes()
        .filter((call) => call.includes("@100%"))
        .at(-1),
    ).toMatch(new RegExp(`^versions deploy ${OLD}@100% .*--message=rollback: the health gate failed at 50%`));
    expect(changes().some((call) => call.includes(`${NEW}@100%`))).toBe(false);
    expect(readState().split).toEqual({ [OLD]: 100 });
  });

  it("rolls back a version whose p99 is slower than 1.5x the previous one's plus 50 ms, at the first step", async () => {
    const { dir } = configuredCopy();
    traffic = { total: 1_000, slowerMs: 200 };
    const result = await deploy(dir);
    expect(result.status).toBe(1);
    expect(result.stderr).toContain(
      "FAILED: the health gate failed at 10%: its p99 318 ms is above 227 ms (1.5x the previous 118 ms + 50 ms)",
    );
    expect(changes().some((call) => call.includes(`${NEW}@50%`))).toBe(false);
    expect(readState().split).toEqual({ [OLD]: 100 });
  });

  it("takes the thresholds and the minimum as options: a stricter p99 rolls back what the defaults pass", async () => {
    const { dir } = configuredCopy();
    traffic = { total: 1_000, slowerMs: 30 };
    expect((await deploy(dir)).status).toBe(0);
    const strict = configuredCopy();
    const result = await deploy(strict.dir, "--p99-factor", "1", "--p99-slack", "10");
    expect(result.status).toBe(1);
    expect(result.stderr).toContain("its p99 148 ms is above 128 ms (1x the previous 118 ms + 10 ms)");
    expect((await deploy(strict.dir, "--min-requests", "lots")).stderr).toContain(
      "--min-requests takes a number of at least 0",
    );
  });

  it("says when there is too little traffic to judge, and lets the smoke check decide", async () => {
    const { dir } = configuredCopy();
    traffic = { total: 60, errorRatio: 0.5 };
    const result = await deploy(dir);
    expect(result.status, result.stderr).toBe(0);
    expect(result.stdout).toContain(
      "the new version served 6 requests, fewer than the 100 needed to judge: the smoke check decides",
    );
    expect(result.stdout).toContain(": too little traffic");
    expect(readState().split).toEqual({ [NEW]: 100 });

    // The same traffic with a smoke check that fails: rolled back by the smoke check.
    const broken = configuredCopy();
    behaviour = { newBrokenFrom: 10 };
    expect((await deploy(broken.dir)).stderr).toContain("FAILED: the smoke checks failed at 10%");
  });

  it("stops the ramp and rolls back when the SQL API cannot be read, rather than going on blind", async () => {
    for (const answer of ["unreachable", "500", "not JSON"] as const) {
      const { dir } = configuredCopy();
      traffic = { total: 1_000, answer };
      const result = await deploy(dir);
      expect(result.status, answer).toBe(1);
      expect(result.stderr, answer).toMatch(
        new RegExp(
          `^FAILED: the health gate could not judge 10% \\(the Analytics Engine SQL API .*\\); not ramping blind. ` +
            `Restored 100% of production to ${OLD}.`,
        ),
      );
      expect(readState().split, answer).toEqual({ [OLD]: 100 });
    }
  });

  it("refuses to ramp without credentials, in a dry run too, unless --no-health-gate, which the plan prints", async () => {
    const { dir } = configuredCopy();
    credentials = false;
    for (const args of [[], ["--dry-run"]]) {
      const refused = await deploy(dir, ...args);
      expect(refused.status).toBe(1);
      expect(refused.stderr).toContain("the health gate needs CLOUDFLARE_ACCOUNT_ID and CLOUDFLARE_API_TOKEN");
      expect(refused.stderr).toContain("--no-health-gate");
    }
    expect(changes()).toEqual([]);
    const ungated = await deploy(dir, "--no-health-gate");
    expect(ungated.status, ungated.stderr).toBe(0);
    expect(ungated.stdout).toContain("== 10%: no health gate (--no-health-gate): the smoke check decides");
    expect(queries).toEqual([]);
    // An all-at-once release has no split to judge: it needs no credentials.
    nextRelease(dir, "Next release: at once", "2b2b2b2b-new0-4000-8000-000000000003");
    expect((await deploy(dir, "--all-at-once")).status).toBe(0);
  });
});
