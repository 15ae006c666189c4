/**
 * The Worker's own code over a local state no `npm start` serves, for one
 * `npm run keys` command: the bundle `wrangler deploy` would upload, on
 * Miniflare, persisting where `npm start` does, so its operator API makes
 * the command's changes as the served one would. Only the accounts' objects
 * are the Worker's own: the webhook dispatcher's and lanes' bindings lead to
 * empty stand-ins, so no delivery a lane has due runs from a keys command
 * (they run when `npm start` next serves the state).
 */
import { createHash } from "node:crypto";
import { existsSync, mkdirSync, mkdtempSync, readdirSync, readFileSync, renameSync, rmSync } from "node:fs";
import { join } from "node:path";
import { convertV4MiniflareOptions, Miniflare } from "miniflare";
import { unstable_getMiniflareWorkerOptions } from "wrangler";
import { ensureLocalSecrets, operatorEnvFile } from "./local-secrets";
import { applyMigrations } from "./local-state";
import { freePort } from "./ports";
import { holdState } from "./serving-record";
import { mustRunWrangler } from "./wrangler";

/** Stand-ins for the webhook classes: bound, never called by the operator API's key and operator operations. */
const QUIET_WEBHOOKS = `import { DurableObject } from "cloudflare:workers";
export class WebhookDispatcher extends DurableObject {}
export class WebhookLane extends DurableObject {}
export default { fetch: () => new Response(null, { status: 404 }) };`;

const QUIET = "quiet-webhooks";

/** Where the bundles are kept: one, for the sources as they were when it was built. */
const BUNDLES = "node_modules/.cache/store-orders-worker";
/** What the bundle is built from: every file of src/, the configuration, the dependencies as locked. */
const BUILT_FROM = ["wrangler.jsonc", "tsconfig.json", "package-lock.json"];

/** A digest of what the project at `root` bundles from: each file's path and bytes, in order. */
export function sourcesDigest(root: string): string {
  const digest = createHash("sha256");
  const files = readdirSync(join(root, "src"), { recursive: true, withFileTypes: true })
    .filter((entry) => entry.isFile())
    .map((entry) => join(entry.parentPath, entry.name))
    .sort();
  for (const file of [...files, ...BUILT_FROM.map((name) => join(root, name))])
    digest.update(`${file}\0`).update(readFileSync(file)).update("\0");
  return digest.digest("hex").slice(0, 16);
}

/**
 * The bundle `wrangler deploy` would upload, for the sources as they are: built once and kept until they change, so
 * a keys command (and a first `npm start`, for its demo key) bundles nothing the one before it did.
 */
export function workerBundle(): string {
  const bundle = join(BUNDLES, sourcesDigest("."));
  if (existsSync(bundle)) return bundle;
  mkdirSync(BUNDLES, { recursive: true });
  // Built beside it and moved in whole: a command running meanwhile finds a whole bundle or none.
  const building = mkdtempSync(join(BUNDLES, ".building-"));
  try {
    mustRunWrangler(["deploy", "--dry-run", "-c", "wrangler.jsonc", "--outdir", building]);
    for (const older of readdirSync(BUNDLES))
      if (!older.startsWith(".") && join(BUNDLES, older) !== bundle)
        rmSync(join(BUNDLES, older), { recursive: true, force: true });
    try {
      renameSync(building, bundle);
    } catch (error) {
      // Another command moved the same one in first: this copy goes.
      if (!existsSync(bundle)) throw error;
    }
  } finally {
    rmSync(building, { recursive: true, force: true });
  }
  return bundle;
}

/** Runs `use` with the base URL of the Worker serving the state, then stops it. */
export async function withStateWorker<T>(stateDir: string | undefined, use: (baseUrl: string) => Promise<T>) {
  const release = holdState(stateDir, "a keys command");
  let runtime: Miniflare | undefined;
  try {
    const bundle = workerBundle();
    const { modulesRules: _, ...worker } = unstable_getMiniflareWorkerOptions("wrangler.jsonc").workerOptions;
    const script = readdirSync(bundle).find((file) => file.endsWith(".js"))!;
    const port = await freePort();
    const options = {
      workers: [
        {
          ...worker,
          // The name the storage is kept under: `npm start`'s worker's, so the accounts' objects are the same ones.
          name: "store-orders",
          modules: true,
          scriptPath: join(bundle, script),
          modulesRoot: bundle,
          bindings: { ...(worker.bindings as object), ...ensureLocalSecrets(operatorEnvFile(stateDir)) },
          durableObjects: {
            ...(worker.durableObjects as object),
            WEBHOOK_DISPATCHER: { className: "WebhookDispatcher", scriptName: QUIET, useSQLite: true },
            WEBHOOK_LANES: { className: "WebhookLane", scriptName: QUIET, useSQLite: true },
          },
        },
        {
          name: QUIET,
          modules: true,
          script: QUIET_WEBHOOKS,
          compatibilityDate: worker.compatibilityDate,
          // Classes of their own, under names of their own: the lanes' stored alarms are not theirs to wake.
          durableObjects: {
            DISPATCHER: { className: "WebhookDispatcher", useSQLite: true },
            LANES: { className: "WebhookLane", useSQLite: true },
          },
        },
      ],
      host: "127.0.0.1",
      port,
      // Where wrangler dev keeps a state it persists to (its getDefaultPersistRoot): the same files.
      resourcePersistencePath: join(stateDir ?? ".wrangler/state", "v3"),
      // The request log's lines are the served Worker's to print: the command prints its own answer only.
      handleStructuredLogs: () => {},
    } as unknown as Parameters<typeof convertV4MiniflareOptions>[0];
    runtime = new Miniflare(convertV4MiniflareOptions(options));
    await runtime.ready;
    await applyMigrations(await runtime.getD1Database("DB"));
    return await use(`http://127.0.0.1:${port}`);
  } finally {
    await runtime?.dispose();
    release();
  }
}
