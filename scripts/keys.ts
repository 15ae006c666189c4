/**
 * `npm run keys -- <command>`: issue, list, show, change, rotate and revoke
 * API keys, and manage named operators, through the operator API
 * (docs/operations.md#api-keys): of the `npm start` serving the local state,
 * or of a deployed environment. The Worker makes every change, so every
 * writer goes through one code path, and no second runtime opens the files
 * `npm start` serves.
 */
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { text } from "node:stream/consumers";
import { SCOPES } from "../src/framework/operations/scopes";
import { PLANS } from "../src/account/plans";
import { isWellFormedKey, KEY_CHECKSUM_LENGTH, KEY_RANDOM_LENGTH } from "../src/keys/key-format";
import { operatorEnvFile } from "./lib/local-secrets";
import { operatorApi, type OperatorApi } from "./lib/operator-client";
import { servingUrl } from "./lib/serving-record";
import { usageReport, type UsageHistoryAnswer } from "./lib/usage-report";

export const ENVIRONMENTS = ["local", "staging", "production"] as const;
type Environment = (typeof ENVIRONMENTS)[number];

const USAGE = `Usage: npm run keys -- <command> [options]

  create --plan <${PLANS.join("|")}> [--name N] [--per-minute N --per-day N]
         [--scopes ${SCOPES.join(",")}] [--expires-in 30d|12h|90m] [--json]
  update <keyId> [--plan P] [--per-minute N --per-day N] [--name N] [--expires-in D]
  rotate <keyId> [--grace 24h] [--json]
  list
  check              whether the key on standard input is well formed (offline: its shape and checksum, no
                     lookup; a key as an argument would stay in ps and the shell's history)
  show <keyId>
  revoke <keyId> [--leaked [--found-at <where>]]
                     --leaked: what it started ends too (its webhook endpoints, console sessions)
  history <keyId>
  usage <keyId> [--history [--granularity minute|hour|day] [--from T] [--to T]]
                     --history: admitted and refused per bucket, with a sparkline
  unban <keyId>
  console-link <keyId> [--json]
                     a single-use console sign-in link, 15 minutes
  operator add <name> [--json]
                     a named operator with a token of its own, shown once (only its SHA-256 is kept)
  operator list
  operator revoke <name>
                     its token and sessions are refused from the next request on
  operator-link <name> [--json]
                     a single-use sign-in link to the operators' console for a named operator, 15 minutes

Every command but check goes through the operator API. --env <${ENVIRONMENTS.join("|")}> (default local) says where:
local is the npm start serving .wrangler/state (or --persist-to <dir>), with the token npm start keeps there, or,
when none serves it, the Worker's own code started over its files for the command;
staging and production are their BASE_URL (or --base-url), with OPERATOR_TOKEN or an Access service token
(CF_ACCESS_CLIENT_ID and CF_ACCESS_CLIENT_SECRET).`;

class UsageError extends Error {}

function parseCommandLine(argv: string[]) {
  try {
    return parseArgs({
      args: argv,
      allowPositionals: true,
      options: {
        plan: { type: "string" },
        name: { type: "string" },
        "per-minute": { type: "string" },
        "per-day": { type: "string" },
        scopes: { type: "string" },
        "expires-in": { type: "string" },
        grace: { type: "string" },
        leaked: { type: "boolean", default: false },
        "found-at": { type: "string" },
        history: { type: "boolean", default: false },
        granularity: { type: "string" },
        from: { type: "string" },
        to: { type: "string" },
        "base-url": { type: "string" },
        env: { type: "string", default: "local" },
        "persist-to": { type: "string" },
        json: { type: "boolean", default: false },
        help: { type: "boolean", short: "h", default: false },
      },
    });
  } catch (error) {
    throw new UsageError(error instanceof Error ? error.message : String(error));
  }
}

type Values = ReturnType<typeof parseCommandLine>["values"];

/** Where the command writes: lines for standard output and for standard error. */
export interface KeysOutput {
  out(line: string): void;
  err(line: string): void;
  /** Standard input, whole: what `check` reads. */
  input?(): Promise<string>;
}

/** Runs one keys command and returns its exit code: 0, or 1 with the reason on standard error. */
export async function runKeysCommand(argv: string[], output: KeysOutput): Promise<number> {
  try {
    await keysCommand(argv, output);
    return 0;
  } catch (error) {
    output.err(
      error instanceof UsageError
        ? `Error: ${error.message}\n\n${USAGE}`
        : `Error: ${error instanceof Error ? error.message : String(error)}`,
    );
    return 1;
  }
}

/** What every subcommand gets: the operator API, the options, where to write. */
interface CommandContext {
  api: OperatorApi;
  where: string;
  values: Values;
  output: KeysOutput;
}

async function keysCommand(argv: string[], output: KeysOutput): Promise<void> {
  const { positionals, values } = parseCommandLine(argv);
  const [command, subject, ...rest] = positionals;
  if (values.help) return void output.out(USAGE);
  // `operator <add|list|revoke> [name]`: one word more than the key commands.
  const [operatorName, ...extra] = command === "operator" ? rest : [undefined, ...rest];
  if (command === "operator-link" && rest.length > 0) throw new UsageError(`Unexpected arguments: ${rest.join(" ")}`);
  if (extra.length > 0) throw new UsageError(`Unexpected arguments: ${extra.join(" ")}`);
  if (command === "check") return check(subject, output);
  const environment = oneOf(values.env, ENVIRONMENTS, "--env");
  if (values["persist-to"] && environment !== "local") throw new UsageError("--persist-to only applies to --env local");
  const run = command === undefined ? undefined : COMMANDS[command];
  if (!run) throw new UsageError(command ? `Unknown command: ${command}` : "No command given.");
  const subjectless = command === "operator" || command === "create" || command === "list";
  if (!subjectless && !subject)
    throw new UsageError(`${command} needs ${command === "operator-link" ? "a name" : "a key id"}`);
  const on = (api: OperatorApi) => {
    const context = { api, where: environment, values, output };
    return command === "operator" ? operator(context, subject, operatorName) : run(context, subject ?? "");
  };
  // A local state nothing serves is served for this command alone, by the Worker's own code over its files. Wrangler
  // and Miniflare are loaded only where needed: seconds of CPU that a command against a running service never uses.
  const stateDir = values["persist-to"];
  if (environment === "local" && values["base-url"] === undefined && servingUrl(stateDir) === undefined) {
    const { withStateWorker } = await import("./lib/state-worker");
    return withStateWorker(stateDir, (baseUrl) => on(operatorApi(baseUrl, { stateDir })!));
  }
  return on(await apiOf(environment, values));
}

/** The operator API of the environment, or why there is none to use. */
async function apiOf(environment: Environment, values: Values): Promise<OperatorApi> {
  if (environment === "local") {
    const stateDir = values["persist-to"];
    const api = operatorApi(values["base-url"], { stateDir });
    if (!api) throw new Error(`No operator token in ${operatorEnvFile(stateDir)}: run npm start once to make one.`);
    return api;
  }
  const baseUrl =
    values["base-url"] ?? String((await import("./lib/environments")).readEnvironment(environment).vars.BASE_URL);
  const api = operatorApi(baseUrl, undefined);
  if (!api)
    throw new Error(
      `${environment}'s operator API needs a credential: OPERATOR_TOKEN, or CF_ACCESS_CLIENT_ID and ` +
        "CF_ACCESS_CLIENT_SECRET where Cloudflare Access guards it.",
    );
  return api;
}

/** A call to the operator API that must be answered: one that could not reach it says so. */
async function ask<T>({ api }: CommandContext, method: "GET" | "POST" | "PATCH", path: string, body?: unknown) {
  const answer = await api.call(method, path, body);
  if (answer === undefined)
    throw new Error(`The operator API at ${api.baseUrl} was not reachable: is the service running there?`);
  return answer as T;
}

/** Offline: whether a string is a key in this service's format (docs/api.md#key-format); exit 1 when not. */
async function check(argument: string | undefined, output: KeysOutput): Promise<void> {
  if (argument !== undefined)
    throw new UsageError("check reads the key from standard input, never an argument: ps and the history keep those");
  const token = (await output.input?.()) ?? "";
  if (token.trim() === "") throw new UsageError("check reads the key to check from standard input: none came");
  if (!isWellFormedKey(token.trim())) throw new Error(`Not a well-formed key: ${describeMalformed(token.trim())}.`);
  output.out("A well-formed key: its checksum holds.");
}

function describeMalformed(token: string): string {
  if (!/^so_(live|test)_/.test(token)) return "it does not start with so_live_ or so_test_";
  if (/[^0-9A-Za-z]/.test(token.slice(8))) return "it has characters other than letters and digits after its prefix";
  const length = token.length - 8;
  if (length !== KEY_RANDOM_LENGTH + KEY_CHECKSUM_LENGTH)
    return `it has ${length} characters after its prefix, not ${KEY_RANDOM_LENGTH + KEY_CHECKSUM_LENGTH}`;
  return "its checksum (the last 6 characters) does not match: a character is mistyped or missing";
}

/** A key as the operator API shows it (src/operator/admin-key.ts). */
interface AdminKey {
  id: string;
  name: string;
  plan: string;
  budget: string;
  scopes: string[];
  limits: { perMinute: number; perDay: number } | null;
  ownLimits: boolean;
  state: string;
  createdAt: string;
  expiresAt: string | null;
  revokedAt: string | null;
}

async function create(context: CommandContext): Promise<void> {
  const { values, output } = context;
  if (values.plan === undefined) throw new UsageError(`create needs --plan ${PLANS.join("|")}`);
  const made = await ask<AdminKey & { key: string }>(context, "POST", "/keys", {
    plan: values.plan,
    ...(values.name !== undefined && { name: values.name }),
    ...limitFields(values),
    ...(values.scopes !== undefined && { scopes: values.scopes.split(",").map((scope) => scope.trim()) }),
    ...(values["expires-in"] !== undefined && { expiresAt: expiryFrom(values["expires-in"]) }),
  });
  if (values.json) return void output.out(JSON.stringify({ id: made.id, key: made.key, plan: made.plan }));
  output.out(
    `Created ${made.id} (${made.plan}${made.ownLimits ? `, ${describeLimits(made.limits)}` : ""}) in ${context.where}.`,
  );
  output.out(`Scopes: ${made.scopes.join(", ")}; ${made.expiresAt ? `expires ${made.expiresAt}` : "does not expire"}.`);
  output.out(`API key, shown this once only; store it now:\n\n  ${made.key}\n`);
}

/** A key as the search finds it (src/operator/search-keys.ts): what `list` prints of it. */
type FoundKey = Pick<AdminKey, "id" | "name" | "plan" | "createdAt" | "expiresAt" | "revokedAt">;

async function list(context: CommandContext): Promise<void> {
  const { values, output } = context;
  const keys: FoundKey[] = [];
  for (let cursor: string | null = ""; cursor !== null; ) {
    const page: { data: FoundKey[]; nextCursor: string | null } = await ask(
      context,
      "GET",
      `/keys?limit=1000${cursor ? `&cursor=${encodeURIComponent(cursor)}` : ""}`,
    );
    keys.push(...page.data);
    cursor = page.nextCursor;
  }
  if (values.json) return void output.out(JSON.stringify(keys));
  if (keys.length === 0) return void output.out(`No keys in ${context.where}.`);
  for (const key of keys) {
    const expiry = key.expiresAt ? `expires ${key.expiresAt}` : "no expiry";
    output.out(
      [key.id, key.plan, JSON.stringify(key.name), `created ${key.createdAt}`, expiry, stateOf(key)].join("  "),
    );
  }
}

function showKey({ values, output }: CommandContext, key: AdminKey): void {
  output.out(values.json ? JSON.stringify(key) : describeKey(key));
}

async function show(context: CommandContext, keyId: string): Promise<void> {
  showKey(context, await ask<AdminKey>(context, "GET", `/keys/${keyId}`));
}

async function revoke(context: CommandContext, keyId: string): Promise<void> {
  const { values, output } = context;
  if (values["found-at"] !== undefined && !values.leaked)
    throw new UsageError("--found-at goes with --leaked: where the leaked key was found");
  const answer = await ask<{ leak?: { endpointsDisabled: string[]; rotatedInto: string[] } }>(
    context,
    "POST",
    `/keys/${keyId}/revoke`,
    {
      reason: values.leaked ? "leaked" : "retired",
      ...(values["found-at"] !== undefined && { foundAt: values["found-at"] }),
    },
  );
  output.err(`Revoked ${keyId}${values.leaked ? " as leaked" : ""}: every location refuses it within 5 seconds.`);
  const { leak } = answer;
  if (leak) {
    output.err(`Disabled the webhook endpoints it made or last aimed: ${leak.endpointsDisabled.join(", ") || "none"}.`);
    if (leak.rotatedInto.length > 0)
      output.err(
        `Keys it made by rotation still work, and whoever held it may hold them: ${leak.rotatedInto.join(", ")}. ` +
          "Rotate them.",
      );
  }
  await show(context, keyId);
}

async function update(context: CommandContext, keyId: string): Promise<void> {
  const { values, output } = context;
  const changes = {
    ...(values.plan !== undefined && { plan: values.plan }),
    ...limitFields(values),
    ...(values.name !== undefined && { name: values.name }),
    ...(values["expires-in"] !== undefined && { expiresAt: expiryFrom(values["expires-in"]) }),
  };
  if (Object.keys(changes).length === 0)
    throw new UsageError("update needs --plan, --per-minute and --per-day, --name or --expires-in");
  const updated = await ask<AdminKey & { reached: string[] }>(context, "PATCH", `/keys/${keyId}`, changes);
  output.err(
    "plan" in changes || "perMinute" in changes
      ? `Updated the account's plan and limits, for ${updated.reached.join(", ")}: every location applies them ` +
          "within 5 seconds."
      : `Updated ${keyId}.`,
  );
  showKey(context, updated);
}

async function rotate(context: CommandContext, keyId: string): Promise<void> {
  const { values, output } = context;
  const rotated = await ask<{ key: string; id: string; previous: { expiresAt: string } }>(
    context,
    "POST",
    `/keys/${keyId}/rotate`,
    { graceSeconds: graceSecondsFrom(values.grace ?? "24h") },
  );
  if (values.json) {
    const { plan } = await ask<AdminKey>(context, "GET", `/keys/${rotated.id}`);
    return void output.out(JSON.stringify({ id: rotated.id, key: rotated.key, plan }));
  }
  output.out(
    `Rotated ${keyId} to ${rotated.id}: both share one account; ${keyId} works until ${rotated.previous.expiresAt}.`,
  );
  output.out(`New API key, shown this once only; store it now:\n\n  ${rotated.key}\n`);
}

interface KeyEvent {
  at: string;
  operation: string;
  actor: string;
  changes: Record<string, unknown>;
  outcome?: "unknown";
}

async function history(context: CommandContext, keyId: string): Promise<void> {
  for (let after: string | null = "0"; after !== null; ) {
    const page: { events: KeyEvent[]; next: string | null } = await ask(
      context,
      "GET",
      `/keys/${keyId}/history?after=${after}`,
    );
    for (const event of page.events) {
      const outcome = event.outcome === "unknown" ? ["(outcome unknown: it failed, and may have taken effect)"] : [];
      context.output.out(
        [event.at, event.operation.padEnd(6), event.actor, JSON.stringify(event.changes), ...outcome].join("  "),
      );
    }
    after = page.next;
  }
}

async function usage(context: CommandContext, keyId: string): Promise<void> {
  const { values, output } = context;
  if (values.history) {
    const query = new URLSearchParams(
      Object.entries({ granularity: values.granularity, from: values.from, to: values.to }).filter(
        (entry): entry is [string, string] => entry[1] !== undefined,
      ),
    );
    const answer = await ask<UsageHistoryAnswer>(
      context,
      "GET",
      `/keys/${keyId}/usage/history${query.size ? `?${query}` : ""}`,
    );
    if (values.json) return void output.out(JSON.stringify(answer));
    for (const line of usageReport(answer)) output.out(line);
    return;
  }
  output.out(JSON.stringify(await ask(context, "GET", `/keys/${keyId}/usage`), null, values.json ? undefined : 2));
}

async function unban(context: CommandContext, keyId: string): Promise<void> {
  const answer = await ask(context, "POST", `/keys/${keyId}/unban`);
  context.output.err(`Unbanned ${keyId}; every location admits it again within 5 seconds.`);
  context.output.out(JSON.stringify(answer, null, context.values.json ? undefined : 2));
}

/**
 * A single-use console sign-in link for the key, for 15 minutes: printed once, for the operator to hand to the key's
 * holder.
 */
async function consoleLink(context: CommandContext, keyId: string): Promise<void> {
  const answer = await ask<{ url: string; expiresAt: string }>(context, "POST", `/keys/${keyId}/console-link`);
  if (context.values.json) return void context.output.out(JSON.stringify(answer));
  context.output.err(
    `A console sign-in link for ${keyId}: it works once, until ${answer.expiresAt}. Hand it to the key's holder, ` +
      "privately.",
  );
  context.output.out(answer.url);
}

interface NamedOperator {
  name: string;
  createdAt: string;
  createdBy: string;
  revokedAt: string | null;
  revokedBy: string | null;
}

/**
 * Named operators (docs/operations.md#operators): `add` makes one with a
 * token of its own, printed once; `list` shows every one, revoked ones too
 * (a name is never given twice); `revoke` ends one's token at once.
 */
async function operator(context: CommandContext, action: string | undefined, name: string | undefined) {
  const { values, output } = context;
  if (action === "list") {
    if (name !== undefined) throw new UsageError(`Unexpected arguments: ${name}`);
    const { data } = await ask<{ data: NamedOperator[] }>(context, "GET", "/operators");
    if (values.json) return void output.out(JSON.stringify(data));
    if (data.length === 0)
      return void output.out(`No named operators in ${context.where} (the OPERATOR_TOKEN secret's is the only one).`);
    for (const row of data) {
      const state = row.revokedAt ? `revoked ${row.revokedAt} by ${row.revokedBy}` : "active";
      output.out([row.name, `added ${row.createdAt} by ${row.createdBy}`, state].join("  "));
    }
    return;
  }
  if (action !== "add" && action !== "revoke") throw new UsageError("operator takes add <name>, list or revoke <name>");
  if (name === undefined) throw new UsageError(`operator ${action} needs a name, such as ana or ana@example.com`);
  if (action === "add") {
    const { token } = await ask<{ token: string }>(context, "POST", "/operators", { name });
    if (values.json) return void output.out(JSON.stringify({ name, token }));
    output.out(
      `Added the operator ${name} in ${context.where}. Their token, shown this once only; hand it to them ` +
        `privately:\n\n  ${token}\n`,
    );
    return;
  }
  const revoked = await ask<NamedOperator>(context, "POST", `/operators/${encodeURIComponent(name)}/revoke`);
  output.err(
    `Revoked the operator ${name} (at ${revoked.revokedAt}): the operator API refuses their token from the next ` +
      "request on.",
  );
}

/**
 * A single-use link that signs a named operator in to the operators' console
 * (docs/operations.md#the-operators-console), for 15 minutes.
 */
async function operatorLink(context: CommandContext, name: string): Promise<void> {
  const link = await ask<{ operator: string; url: string; expiresAt: string }>(
    context,
    "POST",
    `/operators/${encodeURIComponent(name)}/link`,
  );
  if (context.values.json) return void context.output.out(JSON.stringify(link));
  context.output.err(
    `A sign-in link to the operators' console for ${name}: it works once, until ${link.expiresAt}. Hand it to them ` +
      "privately.",
  );
  context.output.out(link.url);
}

const COMMANDS: Record<string, (context: CommandContext, subject: string) => Promise<void>> = {
  create,
  list,
  show,
  revoke,
  update,
  rotate,
  history,
  usage,
  unban,
  "console-link": consoleLink,
  operator: () => Promise.reject(new Error("operator is dispatched with its action")),
  "operator-link": operatorLink,
};

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], flag: string): T {
  if (value !== undefined && (allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`${flag} must be one of ${allowed.join(", ")}${value === undefined ? "" : ` (got "${value}")`}`);
}

/** --per-minute and --per-day as the operator API takes them; whether they make sense is the service's to say. */
function limitFields(values: Values): { perMinute?: number; perDay?: number } {
  return {
    ...(values["per-minute"] !== undefined && { perMinute: positiveInteger(values["per-minute"], "--per-minute") }),
    ...(values["per-day"] !== undefined && { perDay: positiveInteger(values["per-day"], "--per-day") }),
  };
}

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `30d`, `12h` or `90m`, in milliseconds (at most ten years). */
function durationMs(text: string, flag: string): number {
  const match = /^([0-9]{1,6})([mhd])$/.exec(text);
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : NaN;
  if (!(ms <= 3_650 * UNIT_MS.d))
    throw new UsageError(`${flag} takes a number and m, h or d, up to 3650d, such as 30d (got "${text}")`);
  return ms;
}

/** `--expires-in` from now, as an RFC 3339 instant. */
function expiryFrom(text: string): string {
  const ms = durationMs(text, "--expires-in");
  if (ms === 0) throw new UsageError("--expires-in must be more than 0");
  return new Date(Date.now() + ms).toISOString();
}

const graceSecondsFrom = (text: string) => durationMs(text, "--grace") / 1000;

function stateOf(key: Pick<FoundKey, "revokedAt" | "expiresAt">): string {
  if (key.revokedAt) return `revoked ${key.revokedAt}`;
  if (key.expiresAt && Date.parse(key.expiresAt) <= Date.now()) return `expired ${key.expiresAt}`;
  return "active";
}

function positiveInteger(text: string, flag: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(text))
    throw new UsageError(`${flag} must be a whole number from 1 to 999999999 (got "${text}")`);
  return Number(text);
}

const describeLimits = (limits: AdminKey["limits"]) =>
  limits ? `${limits.perMinute}/minute, ${limits.perDay}/day` : "none (an enterprise key needs its own)";

function describeKey(key: AdminKey): string {
  return [
    `id:       ${key.id}`,
    `plan:     ${key.plan}`,
    `name:     ${key.name}`,
    `created:  ${key.createdAt}`,
    `limits:   ${describeLimits(key.limits)}${key.ownLimits ? "" : " (the plan's)"}, for account ${key.budget}`,
    `scopes:   ${key.scopes.join(", ")}`,
    `expires:  ${key.expiresAt ?? "never"}`,
    `state:    ${stateOf(key)}`,
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  process.exitCode = await runKeysCommand(process.argv.slice(2), {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
    input: () => text(process.stdin),
  });
}
