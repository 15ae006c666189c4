/**
 * `npm run keys -- <command>`: issue, list, show and revoke API keys in the
 * local state or a deployed environment (docs/operations.md#api-keys).
 */
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { SCOPES, type Scope } from "../src/framework/operations/scopes";
import { DEFAULT_SCOPES, budgetOf, limitsFor, scopesOf, type ApiKeyRecord } from "../src/keys/api-key-record";
import { PLANS, type Plan, type Limits } from "../src/limiter/plans";
import {
  CLI_ACTOR,
  ENVIRONMENTS,
  findById,
  issueKey,
  keysOfBudget,
  openKeyStore,
  type KeyStore,
  type StoredRecord,
} from "./lib/key-store";
import { sha256Hex } from "../src/lib/digest";
import { KEY_CHECKSUM_LENGTH, KEY_RANDOM_LENGTH, keyShape } from "../src/keys/key-format";
import { base64, urlSafe } from "../src/lib/base64";
import {
  INSERT_OPERATOR,
  LIST_OPERATORS,
  OPERATOR_BY_NAME,
  OPERATOR_NAME,
  REVOKE_OPERATOR,
  type OperatorRow,
} from "../src/operator/operator-table";
import { INSERT_OPERATOR_LINK, OPERATOR_CONSOLE_PATH, OPERATOR_LINK_SECONDS } from "../src/operator/operator-links";
import { readEnvironment } from "./lib/environments";
import { budgetUpdate } from "./lib/budget-update";
import { operatorApi, tellOperatorApi, type OperatorApi, type Told } from "./lib/operator-client";
import { usageReport, type UsageHistoryAnswer } from "./lib/usage-report";

const USAGE = `Usage: npm run keys -- <command> [options]

  create --plan <${PLANS.join("|")}> [--name N] [--per-minute N --per-day N]
         [--scopes ${SCOPES.join(",")}] [--expires-in 30d|12h|90m] [--json]
  update <keyId> [--plan P] [--per-minute N --per-day N] [--name N] [--expires-in D]
  rotate <keyId> [--grace 24h] [--json]
  list
  check <token>      whether a string is a well-formed key (offline: its shape and checksum, no lookup)
  show <keyId>
  revoke <keyId> [--leaked [--found-at <where>]]
                     --leaked: what it started ends too (its webhook endpoints, console sessions),
                     through the operator API
  history <keyId>
  usage <keyId> [--history [--granularity minute|hour|day] [--from T] [--to T]]
                     (through the operator API; --history: admitted and refused per bucket, with a sparkline)
  unban <keyId>      (through the operator API)
  console-link <keyId> [--json]
                     (through the operator API) a single-use console sign-in link, 15 minutes
  operator add <name> [--json]
                     a named operator with a token of its own, shown once (only its SHA-256 is kept)
  operator list
  operator revoke <name>
                     its token and sessions are refused from the next request on
  operator-link <name> [--json]
                     a single-use sign-in link to the operators' console for a named operator, 15 minutes

Every command takes --env <${ENVIRONMENTS.join("|")}> (default local).
Local commands take --persist-to <dir> to use a state folder other than .wrangler/state.
usage, unban, console-link and revoke use the operator API at --base-url (locally, the service npm start runs on
port 8787 by default), with the token from OPERATOR_TOKEN (locally, from the state folder's operator.env).`;

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

/** Where the command writes: lines for standard output and for standard error. */
export interface KeysOutput {
  out(line: string): void;
  err(line: string): void;
}

/**
 * Runs one keys command and returns its exit code: 0, or 1 with the reason on
 * standard error. `store` is an already open local store to use instead of
 * opening one (the tests keep one open for many commands).
 */
export async function runKeysCommand(argv: string[], output: KeysOutput, store?: KeyStore): Promise<number> {
  try {
    await keysCommand(argv, output, store);
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

async function keysCommand(argv: string[], output: KeysOutput, shared: KeyStore | undefined): Promise<void> {
  const { positionals, values } = parseCommandLine(argv);
  const [command, keyId, ...rest] = positionals;
  if (values.help) return void output.out(USAGE);
  // `operator <add|list|revoke> [name]`: one word more than the key commands.
  const [operatorName, ...extra] = command === "operator" ? rest : [undefined, ...rest];
  if (command === "operator-link" && rest.length > 0) throw new UsageError(`Unexpected arguments: ${rest.join(" ")}`);
  if (extra.length > 0) throw new UsageError(`Unexpected arguments: ${extra.join(" ")}`);

  if (command === "check") return check(keyId, output);
  const environment = oneOf(values.env, ENVIRONMENTS, "--env");
  if (values["persist-to"] && environment !== "local") throw new UsageError("--persist-to only applies to --env local");
  if (!KNOWN_COMMANDS.includes(command ?? ""))
    throw new UsageError(command ? `Unknown command: ${command}` : "No command given.");
  const store = shared?.environment === environment ? shared : await openKeyStore(environment, values["persist-to"]);
  try {
    if (command === "operator") await operator({ store, values, output }, keyId, operatorName);
    else if (command === "operator-link") await operatorLink({ store, values, output }, keyId);
    else await onStore(store, command!, keyId, values, output);
  } finally {
    if (store !== shared) await store.close();
  }
}

type Values = ReturnType<typeof parseCommandLine>["values"];

/** What every subcommand gets: the open store, the options, where to write. */
interface CommandContext {
  store: KeyStore;
  values: Values;
  output: KeysOutput;
}

/**
 * What a subcommand on one key gets besides: the key as stored, and the operator API (absent when none is reachable).
 */
interface KeyCommandContext extends CommandContext {
  keyId: string;
  found: StoredRecord;
  api: OperatorApi | undefined;
  /** After a KV write the limiter is only the fast path: a failure to tell it is reported as what it was, not fatal. */
  tellLimiter(action: string, body?: unknown): Promise<Told>;
}

/** Offline: whether a string is a key in this service's format (docs/api.md#key-format); exit 1 when not. */
function check(token: string | undefined, output: KeysOutput): void {
  if (token === undefined) throw new UsageError("check takes the token to check");
  const shape = keyShape(token.trim());
  if (shape === "malformed") throw new Error(`Not a well-formed key: ${describeMalformed(token.trim())}.`);
  output.out(
    shape === "checksummed"
      ? "A well-formed key: its checksum holds."
      : "A well-formed key of the shape issued before checksums (32 characters, no checksum to check).",
  );
}

function describeMalformed(token: string): string {
  if (!/^so_(live|test)_/.test(token)) return "it does not start with so_live_ or so_test_";
  if (/[^0-9A-Za-z]/.test(token.slice(8))) return "it has characters other than letters and digits after its prefix";
  const length = token.length - 8;
  if (length !== KEY_RANDOM_LENGTH + KEY_CHECKSUM_LENGTH)
    return `it has ${length} characters after its prefix, not ${KEY_RANDOM_LENGTH + KEY_CHECKSUM_LENGTH}`;
  return "its checksum (the last 6 characters) does not match: a character is mistyped or missing";
}

async function create({ store, values, output }: CommandContext): Promise<void> {
  const plan = oneOf(values.plan, PLANS, "--plan");
  const limits = limitsFrom(plan, values["per-minute"], values["per-day"]);
  const scopes = scopesFrom(values.scopes);
  const expiresAt = values["expires-in"] === undefined ? undefined : expiryFrom(values["expires-in"]);
  const { key, record } = await issueKey(store, {
    plan,
    name: values.name ?? `${plan} key`,
    limits,
    scopes,
    expiresAt,
  });
  if (values.json) return void output.out(JSON.stringify({ id: record.id, key, plan: record.plan }));
  output.out(
    `Created ${record.id} (${record.plan}${limits ? `, ${describeLimits(limits)}` : ""}) in ${store.environment}.`,
  );
  output.out(
    `Scopes: ${scopesOf(record).join(", ")}; ${record.expiresAt ? `expires ${record.expiresAt}` : "does not expire"}.`,
  );
  output.out(`API key, shown this once only; store it now:\n\n  ${key}\n`);
}

async function list({ store, values, output }: CommandContext): Promise<void> {
  const rows = (await store.list("id:")).map(({ name, metadata }) => ({ id: name.slice(3), ...metadata }));
  if (values.json) return void output.out(JSON.stringify(rows));
  if (rows.length === 0) return void output.out(`No keys in ${store.environment}.`);
  for (const row of rows) {
    const expiry = row.expiresAt ? `expires ${row.expiresAt}` : "no expiry";
    output.out(
      [row.id, row.plan, JSON.stringify(row.name), `created ${row.createdAt}`, expiry, stateOf(row)].join("  "),
    );
  }
}

function showRecord({ values, output }: CommandContext, record: ApiKeyRecord): void {
  output.out(values.json ? JSON.stringify(record) : describeRecord(record));
}

async function show(context: KeyCommandContext): Promise<void> {
  showRecord(context, context.found.record);
}

async function revoke(context: KeyCommandContext): Promise<void> {
  const { store, found, keyId, output, values } = context;
  const reason = values.leaked ? "leaked" : "retired";
  if (values["found-at"] !== undefined && !values.leaked)
    throw new UsageError("--found-at goes with --leaked: where the leaked key was found");
  let { record } = found;
  if (!record.revokedAt || (reason === "leaked" && record.revokedReason !== "leaked")) {
    const revoked = {
      ...record,
      revokedAt: record.revokedAt ?? new Date().toISOString(),
      revokedReason: reason,
    } as const;
    await store.audited([{ operation: "revoke", keyId, changes: { revokedAt: revoked.revokedAt, reason } }], () =>
      store.putRecords([{ hash: found.hash, record: revoked }]),
    );
    record = revoked;
  }
  // Told again for a key already revoked: a revoke whose limiter call failed, or whose leak was not ended, is finished
  // by running it again.
  const told = await context.tellLimiter("revoke", {
    reason,
    ...(values["found-at"] !== undefined && { foundAt: values["found-at"] }),
  });
  if (!told.ok) {
    output.err(`Revoked ${keyId} in KV only (${told.problem}): every location refuses it within about 65 seconds.`);
    if (reason === "leaked")
      output.err(
        "Its leak is NOT ended: the webhook endpoints it made still deliver, its console sessions go on. Run this " +
          "again once the operator API answers.",
      );
  } else if (reason === "leaked") {
    const leak = (
      told.answer as { leak?: { endpointsDisabled: string[]; rotatedInto: string[]; sessionsEnded: number } }
    ).leak;
    output.err(
      `Revoked ${keyId} as leaked, and told its limiter at ${told.at}: every location refuses it within 5 seconds.`,
    );
    if (leak) {
      output.err(
        `Disabled the webhook endpoints it made or last aimed: ${leak.endpointsDisabled.join(", ") || "none"}; ended ` +
          `${leak.sessionsEnded} console session(s).`,
      );
      if (leak.rotatedInto.length > 0)
        output.err(
          `Keys it made by rotation still work, and whoever held it may hold them: ${leak.rotatedInto.join(", ")}. ` +
            `Rotate them.`,
        );
    }
  } else {
    output.err(`Revoked ${keyId}, and told its limiter at ${told.at}: every location refuses it within 5 seconds.`);
  }
  showRecord(context, record);
}

async function update(context: KeyCommandContext): Promise<void> {
  const { store, found, keyId, output } = context;
  const changes = updatesFrom(found.record, context.values);
  const sharing =
    "limitsSetAt" in changes ? (await keysOfBudget(store, found.record)).filter((key) => key.record.id !== keyId) : [];
  const budget = budgetUpdate(found, sharing, changes);
  await store.audited(budget.events, () => store.putRecords(budget.records));
  const record = budget.records[0]!.record;
  const reached = budget.records.map((key) => key.record.id).join(", ");
  if (!("limitsSetAt" in changes)) {
    output.err(`Updated ${keyId}.`);
  } else {
    const told = await context.tellLimiter("limits", { ...limitsFor(record), setAt: record.limitsSetAt });
    output.err(
      told.ok
        ? `Updated the budget of ${reached}, and told its limiter at ${told.at}: every location applies the new ` +
            `limits within 5 seconds.`
        : `Updated the budget of ${reached} in KV only (${told.problem}): every location applies it within about 65 ` +
            `seconds (KV's propagation and the key cache).`,
    );
  }
  showRecord(context, record);
}

async function rotateKey({ store, found, keyId, values, output, tellLimiter }: KeyCommandContext): Promise<void> {
  const rotated = await rotate(store, found, values.grace ?? "24h");
  // The budget's object decides at once what KV may show a minute late elsewhere: the old key acts only on itself, and
  // ends with its grace.
  const told = await tellLimiter("rotation", { endsAt: rotated.oldExpiresAt });
  if (!told.ok)
    output.err(
      `Told only KV (${told.problem}): ${keyId} may act on the budget's other keys and endpoints for ` +
        `about 65 seconds ` +
        `` +
        `` +
        `more at other locations.`,
    );
  if (values.json)
    return void output.out(JSON.stringify({ id: rotated.record.id, key: rotated.key, plan: rotated.record.plan }));
  output.out(
    `Rotated ${keyId} to ${rotated.record.id}: both share one budget; ${keyId} works until ${rotated.oldExpiresAt}.`,
  );
  output.out(`New API key, shown this once only; store it now:\n\n  ${rotated.key}\n`);
}

async function history({ store, keyId, output }: KeyCommandContext): Promise<void> {
  for (const event of await store.history(keyId)) {
    const outcome = event.outcome === "unknown" ? ["(outcome unknown: it failed, and may have taken effect)"] : [];
    output.out(
      [event.at, event.operation.padEnd(6), event.actor, JSON.stringify(event.changes), ...outcome].join("  "),
    );
  }
}

const needsOperatorApi = (command: string) =>
  new Error(`${command} needs the operator API: start the service, or pass --base-url and OPERATOR_TOKEN.`);

async function usage({ api, keyId, values, output }: KeyCommandContext): Promise<void> {
  if (values.history) {
    const query = new URLSearchParams(
      Object.entries({ granularity: values.granularity, from: values.from, to: values.to }).filter(
        (entry): entry is [string, string] => entry[1] !== undefined,
      ),
    );
    const answer =
      api &&
      ((await api.call("GET", `/keys/${keyId}/usage/history${query.size ? `?${query}` : ""}`)) as
        | UsageHistoryAnswer
        | undefined);
    if (answer === undefined) throw needsOperatorApi("usage");
    if (values.json) return void output.out(JSON.stringify(answer));
    for (const line of usageReport(answer)) output.out(line);
    return;
  }
  const answer = api && (await api.call("GET", `/keys/${keyId}/usage`));
  if (answer === undefined) throw needsOperatorApi("usage");
  output.out(JSON.stringify(answer, null, values.json ? undefined : 2));
}

async function unban({ api, keyId, values, output }: KeyCommandContext): Promise<void> {
  const answer = api && (await api.call("POST", `/keys/${keyId}/unban`));
  if (answer === undefined) throw needsOperatorApi("unban");
  output.err(`Unbanned ${keyId}; every location admits it again within 5 seconds.`);
  output.out(JSON.stringify(answer, null, values.json ? undefined : 2));
}

/**
 * A single-use console sign-in link for the key, for 15 minutes: printed once, for the operator to hand to the key's
 * holder.
 */
async function consoleLink({ api, keyId, values, output }: KeyCommandContext): Promise<void> {
  const answer =
    api && ((await api.call("POST", `/keys/${keyId}/console-link`)) as { url: string; expiresAt: string } | undefined);
  if (answer === undefined) throw needsOperatorApi("console-link");
  if (values.json) return void output.out(JSON.stringify(answer));
  output.err(
    `A console sign-in link for ${keyId}: it works once, until ${answer.expiresAt}. Hand it to the key's holder, ` +
      `privately.`,
  );
  output.out(answer.url);
}

/** The subcommands on the store, and those on one key (named by its id). */
const STORE_COMMANDS: Record<string, (context: CommandContext) => Promise<void>> = { create, list };
const KEY_COMMANDS: Record<string, (context: KeyCommandContext) => Promise<void>> = {
  show,
  revoke,
  update,
  rotate: rotateKey,
  history,
  usage,
  unban,
  "console-link": consoleLink,
};
const KNOWN_COMMANDS = [...Object.keys(STORE_COMMANDS), ...Object.keys(KEY_COMMANDS), "operator", "operator-link"];

/**
 * Named operators (docs/operations.md#operators): `add` makes one with a
 * token of its own, printed once; `list` shows every one, revoked ones too
 * (a name is never given twice); `revoke` ends one's token at once.
 */
async function operator(
  { store, values, output }: CommandContext,
  action: string | undefined,
  name: string | undefined,
): Promise<void> {
  if (action === "list") {
    if (name !== undefined) throw new UsageError(`Unexpected arguments: ${name}`);
    const rows = await store.query<OperatorRow>(LIST_OPERATORS, []);
    if (values.json) return void output.out(JSON.stringify(rows));
    if (rows.length === 0)
      return void output.out(
        `No named operators in ${store.environment} (the OPERATOR_TOKEN secret's is the only one).`,
      );
    for (const row of rows) {
      const state = row.revoked_at ? `revoked ${row.revoked_at} by ${row.revoked_by}` : "active";
      output.out([row.name, `added ${row.created_at} by ${row.created_by}`, state].join("  "));
    }
    return;
  }
  if (action !== "add" && action !== "revoke") throw new UsageError("operator takes add <name>, list or revoke <name>");
  if (name === undefined || !OPERATOR_NAME.test(name)) {
    throw new UsageError(
      `operator ${action} needs a name: letters, digits and . _ @ + -, up to 64, such as ana or ana@example.com` +
        (name === undefined ? "" : ` (got "${name}")`),
    );
  }
  const now = new Date().toISOString();
  const [existing] = await store.query<OperatorRow>(OPERATOR_BY_NAME, [name]);
  if (action === "add") {
    if (existing)
      throw new UsageError(
        `An operator named ${name} ` +
          `${existing.revoked_at ? `was revoked at ${existing.revoked_at}; a name is never given twice` : "exists"}.`,
      );
    const token = `so_op_${urlSafe(base64(crypto.getRandomValues(new Uint8Array(32))))}`;
    await store.query(INSERT_OPERATOR, [name, await sha256Hex(token), now, CLI_ACTOR]);
    if (values.json) return void output.out(JSON.stringify({ name, token }));
    output.out(
      `Added the operator ${name} in ${store.environment}. Their token, shown this once only; hand it to them ` +
        `privately:\n\n  ${token}\n`,
    );
    return;
  }
  if (!existing) throw new UsageError(`No operator ${name} in ${store.environment}.`);
  if (existing.revoked_at) return void output.err(`${name} was revoked already, at ${existing.revoked_at}.`);
  await store.query(REVOKE_OPERATOR, [name, now, CLI_ACTOR]);
  output.err(`Revoked the operator ${name}: the operator API refuses their token from the next request on.`);
}

/**
 * A single-use link that signs a named operator in to the operators' console
 * (docs/operations.md#the-operators-console), for 15 minutes: its token made
 * here and printed once in the link's fragment, only its SHA-256 stored.
 */
async function operatorLink({ store, values, output }: CommandContext, name: string | undefined): Promise<void> {
  if (name === undefined || !OPERATOR_NAME.test(name))
    throw new UsageError("operator-link needs a named operator's name, such as ana@example.com");
  const [existing] = await store.query<OperatorRow>(OPERATOR_BY_NAME, [name]);
  if (!existing || existing.revoked_at)
    throw new UsageError(
      `No live operator ${name} in ${store.environment}${existing ? ` (revoked at ${existing.revoked_at})` : ""}: ` +
        "links are for named operators (operator add).",
    );
  const token = urlSafe(base64(crypto.getRandomValues(new Uint8Array(32))));
  const now = Date.now();
  const expiresAt = new Date(now + OPERATOR_LINK_SECONDS * 1000).toISOString();
  await store.query(INSERT_OPERATOR_LINK, [
    await sha256Hex(token),
    name,
    new Date(now).toISOString(),
    expiresAt,
    CLI_ACTOR,
  ]);
  const baseUrl =
    values["base-url"] ??
    (store.environment === "local"
      ? "http://localhost:8787"
      : String(readEnvironment(store.environment).vars.BASE_URL));
  const url = `${new URL(baseUrl).origin}${OPERATOR_CONSOLE_PATH}#link=${token}`;
  if (values.json) return void output.out(JSON.stringify({ operator: name, url, expiresAt }));
  output.err(
    `A sign-in link to the operators' console for ${name}: it works once, until ${expiresAt}. Hand it to them ` +
      `privately.`,
  );
  output.out(url);
}

async function onStore(
  store: KeyStore,
  command: string,
  keyId: string | undefined,
  values: Values,
  output: KeysOutput,
): Promise<void> {
  const onTheStore = STORE_COMMANDS[command];
  if (onTheStore) return onTheStore({ store, values, output });
  if (!keyId) throw new UsageError(`${command} needs a key id, such as key_0123456789abcdef`);
  const found = await findById(store, keyId);
  if (!found) throw new UsageError(`No key ${keyId} in ${store.environment}.`);
  const api = operatorApi(
    values["base-url"],
    store.environment === "local" ? { stateDir: values["persist-to"] } : undefined,
  );
  const tellLimiter = (action: string, body?: unknown) => tellOperatorApi(api, `/keys/${keyId}/${action}`, body);
  await KEY_COMMANDS[command]!({ store, values, output, keyId, found, api, tellLimiter });
}

function oneOf<T extends string>(value: string | undefined, allowed: readonly T[], flag: string): T {
  if (value !== undefined && (allowed as readonly string[]).includes(value)) return value as T;
  throw new UsageError(`${flag} must be one of ${allowed.join(", ")}${value === undefined ? "" : ` (got "${value}")`}`);
}

/** Enterprise keys carry their own limits; other plans may override theirs. Both numbers or neither. */
function limitsFrom(plan: Plan, perMinute: string | undefined, perDay: string | undefined): Limits | undefined {
  if (perMinute === undefined && perDay === undefined) {
    if (plan === "enterprise") throw new UsageError("enterprise keys need --per-minute and --per-day");
    return undefined;
  }
  if (perMinute === undefined || perDay === undefined) throw new UsageError("give both --per-minute and --per-day");
  return { perMinute: positiveInteger(perMinute, "--per-minute"), perDay: positiveInteger(perDay, "--per-day") };
}

/**
 * What `update` changes: a plan (dropping a limits override unless new limits
 * come with it), limits, a name, an expiry. Plan and limits belong to the
 * budget (every key of a rotated pair); name and expiry to the one key.
 * Nothing to change, or a change that would leave an enterprise key without
 * limits, is a usage error.
 */
function updatesFrom(
  record: ApiKeyRecord,
  values: ReturnType<typeof parseCommandLine>["values"],
): Partial<ApiKeyRecord> {
  if (record.revokedAt) throw new UsageError(`${record.id} is revoked; issue a new key instead.`);
  const changes: Partial<ApiKeyRecord> = {};
  const plan = values.plan === undefined ? record.plan : oneOf(values.plan, PLANS, "--plan");
  const newLimits =
    values["per-minute"] === undefined && values["per-day"] === undefined
      ? undefined
      : limitsFrom(plan, values["per-minute"], values["per-day"]);
  if (plan !== record.plan) {
    changes.plan = plan;
    if (!newLimits) {
      if (plan === "enterprise") throw new UsageError("enterprise keys need --per-minute and --per-day");
      if (record.limits) changes.limits = undefined;
    }
  }
  if (newLimits) changes.limits = newLimits;
  // One stamp for the budget's new limits: the object never lets an older record's limits win
  // (docs/operations.md#api-keys).
  if ("plan" in changes || "limits" in changes) changes.limitsSetAt = new Date().toISOString();
  if (values.name !== undefined) changes.name = values.name;
  if (values["expires-in"] !== undefined) changes.expiresAt = expiryFrom(values["expires-in"]);
  if (Object.keys(changes).length === 0)
    throw new UsageError("update needs --plan, --per-minute and --per-day, --name or --expires-in");
  return changes;
}

/**
 * A new key with the same plan, limits, scopes and expiry, counting against
 * the same budget; the old key keeps working for the grace period, then
 * expires. Rotating a revoked or expired key is a usage error.
 */
async function rotate(store: KeyStore, { hash, record }: StoredRecord, grace: string) {
  if (record.revokedAt) throw new UsageError(`${record.id} is revoked; issue a new key instead.`);
  if (record.expiresAt && Date.parse(record.expiresAt) <= Date.now())
    throw new UsageError(`${record.id} has expired; issue a new key instead.`);
  const graceEnds = expiryFrom(grace, "--grace");
  const { id: _, createdAt: __, rotatedTo: ___, ...kept } = record;
  // The budget's limits and their stamp go with it: one budget, one set of limits.
  const rotated = await issueKey(
    store,
    { ...kept, limitsSetAt: record.limitsSetAt ?? record.createdAt, budget: budgetOf(record) },
    { rotatedFrom: record.id },
  );
  const oldExpiresAt = record.expiresAt && record.expiresAt < graceEnds ? record.expiresAt : graceEnds;
  await store.audited(
    [{ operation: "rotate", keyId: record.id, changes: { rotatedTo: rotated.record.id, expiresAt: oldExpiresAt } }],
    () => store.putRecords([{ hash, record: { ...record, expiresAt: oldExpiresAt, rotatedTo: rotated.record.id } }]),
  );
  return { ...rotated, oldExpiresAt };
}

/** The scopes asked for, DEFAULT_SCOPES when none are named. */
function scopesFrom(text: string | undefined): Scope[] {
  if (text === undefined) return [...DEFAULT_SCOPES];
  const scopes = text.split(",").map((scope) => scope.trim());
  for (const scope of scopes) {
    if (!(SCOPES as readonly string[]).includes(scope))
      throw new UsageError(`--scopes takes ${SCOPES.join(", ")} (got "${scope}")`);
  }
  return [...new Set(scopes)] as Scope[];
}

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `30d`, `12h` or `90m` from now, as an ISO 8601 instant (at most ten years). */
function expiryFrom(text: string, flag = "--expires-in"): string {
  const match = /^([1-9][0-9]{0,5})([mhd])$/.exec(text);
  const ms = match ? Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS] : NaN;
  if (!(ms <= 3_650 * UNIT_MS.d))
    throw new UsageError(`${flag} takes a number and m, h or d, up to 3650d, such as 30d (got "${text}")`);
  return new Date(Date.now() + ms).toISOString();
}

function stateOf(record: Pick<ApiKeyRecord, "revokedAt" | "expiresAt">): string {
  if (record.revokedAt) return `revoked ${record.revokedAt}`;
  if (record.expiresAt && Date.parse(record.expiresAt) <= Date.now()) return `expired ${record.expiresAt}`;
  return "active";
}

function positiveInteger(text: string, flag: string): number {
  if (!/^[1-9][0-9]{0,8}$/.test(text))
    throw new UsageError(`${flag} must be a whole number from 1 to 999999999 (got "${text}")`);
  return Number(text);
}

const describeLimits = (limits: Limits) => `${limits.perMinute}/minute, ${limits.perDay}/day`;

function describeRecord(record: ApiKeyRecord): string {
  return [
    `id:       ${record.id}`,
    `plan:     ${record.plan}`,
    `name:     ${record.name}`,
    `created:  ${record.createdAt}`,
    `limits:   ${describeLimits(limitsFor(record))}${record.limits ? "" : " (the plan's)"}, for budget ` +
      `${budgetOf(record)}`,
    `scopes:   ${scopesOf(record).join(", ")}`,
    `expires:  ${record.expiresAt ?? "never"}`,
    `state:    ${stateOf(record)}`,
  ].join("\n");
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  process.exitCode = await runKeysCommand(process.argv.slice(2), {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
  });
}
