/**
 * `npm start`: local D1 migrations, demo data (once; `--orders N` adds N
 * synthetic ones), a demo API key, then
 * `wrangler dev`. State lives in wrangler's default .wrangler/state unless
 * --persist-to says otherwise, so `wrangler d1 execute --local` and
 * `npm run keys` see the same data.
 */
import { existsSync, mkdirSync, readFileSync, writeFileSync } from "node:fs";
import { dirname, join } from "node:path";
import { parseArgs } from "node:util";
import { SCOPES } from "../src/framework/operations/scopes";
import { KeyPointer, ownerName, pointerName } from "../src/keys/kv-layout";
import { sha256Hex } from "../src/lib/digest";
import { ensureLocalSecrets, operatorEnvFile } from "./lib/local-secrets";
import { holdState, recordServing } from "./lib/serving-record";
import { startWrangler } from "./lib/wrangler";

const USAGE = `npm start [-- options]: the service on http://localhost:<port>/v1 over local state, with demo data.
  --port <n>          the port (8787)
  --inspector-port <n>  the debugger's port (wrangler's: 9229, or the next free one)
  --persist-to <dir>  where the local state lives (.wrangler/state)
  --orders <n>        add n synthetic orders, once (1 to 1000000)
  --help              this`;

const parsed = (() => {
  try {
    return parseArgs({
      options: {
        port: { type: "string", default: "8787" },
        "inspector-port": { type: "string" },
        "persist-to": { type: "string" },
        orders: { type: "string" },
        help: { type: "boolean" },
      },
    });
  } catch (error) {
    console.error(`${(error as Error).message}\n\n${USAGE}`);
    process.exit(2);
  }
})();
const { values } = parsed;
if (values.help) {
  console.log(USAGE);
  process.exit(0);
}
const stateDir = values["persist-to"];
const persist = stateDir ? ["--persist-to", stateDir] : [];
const inspector = values["inspector-port"] ? ["--inspector-port", values["inspector-port"]] : [];

if (values.orders !== undefined && (!/^[1-9][0-9]{0,6}$/.test(values.orders) || Number(values.orders) > 1_000_000)) {
  console.error("--orders must be a whole number from 1 to 1000000");
  process.exit(2);
}
// Loaded once the options hold: wrangler, Miniflare and esbuild take seconds of CPU that --help never needs.
const [{ buildAssets }, { issueLocalKeys }, { applyMigrations, executeSql, openLocalState }, environments] =
  await Promise.all([
    import("./lib/assets"),
    import("./lib/key-store"),
    import("./lib/local-state"),
    import("./lib/environments"),
  ]);
// The consoles' pages as they are now (npm test built them already for the services it starts).
if (process.env.STORE_ORDERS_ASSETS_BUILT !== "1") await buildAssets();
// From its first write to its exit: no keys command opens the state meanwhile (it reaches /admin once this serves).
holdState(stateDir, "npm start");
const demoKey = await prepareLocalState();
const operatorEnv = operatorEnvFile(stateDir);
const operatorToken = ensureLocalSecrets(operatorEnv).OPERATOR_TOKEN.slice("local:".length);

const base = `http://localhost:${values.port}/v1`;
console.log(
  `\nStarting the service on ${base}. Try:\n\n  curl -H "Authorization: Bearer ${demoKey}" ${base}/store/orders\n`,
);
console.log(`The console (sign in with the demo key): http://localhost:${values.port}/console\n`);
console.log(
  `Operator API (local token, from ${operatorEnv}): curl -H "Authorization: Bearer ${operatorToken}" ` +
    `http://localhost:${values.port}/admin/keys/<keyId>/usage\n`,
);
// BASE_URL follows the port, so GET / and the deprecation Link point where the service really is (never the
// environment's: tools such as Vite set one of their own); any other var wrangler.jsonc declares is taken from the
// environment when set there.
const fromEnvironment = environments.varsFromEnvironment(
  Object.keys(environments.readEnvironment(undefined).vars).filter((name) => name !== "BASE_URL"),
  process.env,
);
const dev = startWrangler([
  "dev",
  "--port",
  values.port,
  "--ip",
  "127.0.0.1",
  "--var",
  `BASE_URL:${base}`,
  ...fromEnvironment,
  "--env-file",
  operatorEnv,
  ...persist,
  ...inspector,
]);
// `npm run keys` finds the service here, and goes through its operator API rather than opening the state itself.
recordServing(stateDir, Number(values.port));
// A stop of npm start is wrangler dev's: it stops workerd and frees the port, then this process follows it out.
// The local state's runtime leaves exit hooks behind that would end this process at once, before wrangler hears
// of it, and leave wrangler and workerd holding the port: from here on, this process only stands for wrangler dev.
for (const signal of ["SIGINT", "SIGTERM"] as const) {
  process.removeAllListeners(signal);
  process.on(signal, () => dev.kill(signal));
}
dev.on("exit", (code) => process.exit(code ?? 0));

/**
 * `--orders N`: N orders to try the streamed list, the cache and the client
 * on at scale. Their ids are consecutive from 2^53 + 1, where a double cannot
 * tell neighbours apart (JSON.parse would merge them), pet ids likewise; every
 * status, ship dates on most. INSERT OR IGNORE: loading again keeps what a
 * developer changed.
 */
function syntheticOrdersSql(count: number): string {
  return `WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < ${count})
INSERT OR IGNORE INTO orders (id, pet_id, quantity, ship_date, status, complete, created_at, updated_at)
SELECT 9007199254740992 + i, 9007199254740992 + i % 1000, 1 + i % 5,
  CASE WHEN i % 7 = 0 THEN NULL
    ELSE strftime('%Y-%m-%dT%H:%M:%SZ', '2026-11-01T00:00:00Z', '+' || (i % 525600) || ' minutes') END,
  CASE i % 4 WHEN 1 THEN 'pending' WHEN 2 THEN 'shipped' WHEN 3 THEN 'delivered' ELSE 'cancelled' END,
  CASE WHEN i % 4 = 3 THEN 1 ELSE 0 END, '2026-10-01T00:00:00Z', '2026-10-01T00:00:00Z' FROM n`;
}

/**
 * The local database migrated and loaded, and the demo key, through one
 * local runtime (scripts/lib/local-state.ts). The demo key is a local-only
 * convenience: KV keeps only its hash, so the key itself is kept beside the
 * local state to be printed on every start.
 */
async function prepareLocalState(): Promise<string> {
  const file = join(stateDir ?? ".wrangler/state", "demo-api-key");
  const state = await openLocalState(stateDir);
  try {
    console.log("Applying local D1 migrations…");
    for (const name of await applyMigrations(state.env.DB)) console.log(`  applied ${name}`);
    console.log("Loading demo data (rows that exist are kept)…");
    await executeSql(state.env.DB, readFileSync("scripts/demo-data.sql", "utf8"));
    if (values.orders !== undefined) {
      const count = Number(values.orders);
      console.log(`Loading ${count.toLocaleString("en")} synthetic orders (once: orders that exist are kept)…`);
      await executeSql(state.env.DB, syntheticOrdersSql(count));
    }
    if (existsSync(file)) {
      const saved = readFileSync(file, "utf8").trim();
      // A key made before keys lived in their accounts has a whole record in KV, not a pointer; one made before its
      // owner entry, a pointer alone, and operators' calls by its id would not find it.
      const stored = await state.env.API_KEYS.get(pointerName(await sha256Hex(saved)));
      const pointer = stored === null ? undefined : KeyPointer.safeParse(JSON.parse(stored)).data;
      if (pointer === undefined || (await state.env.API_KEYS.get(ownerName(pointer.keyId))) === null)
        throw new Error(
          "This local state's keys were made before keys lived in their accounts. Start the local state anew: " +
            "rm -rf .wrangler/state (or your --persist-to folder), then npm start.",
        );
      return saved;
    }
  } finally {
    await state.dispose();
  }
  console.log("Creating a local demo API key (pro plan)…");
  // Every scope, webhooks:manage too: the README's walk-through makes an endpoint with it.
  const [key] = await issueLocalKeys(stateDir, [{ plan: "pro", name: "local demo key", scopes: [...SCOPES] }]);
  mkdirSync(dirname(file), { recursive: true });
  writeFileSync(file, `${key}\n`, { mode: 0o600 });
  return key!;
}
