/**
 * `npm run restore -- --env <staging|production> --timestamp <instant> --base-url <https://host/v1>`
 * (docs/operations.md#restoring-d1): D1 Time Travel with the order events'
 * ids kept unique. It notes the event sequence through the operator API,
 * restores the database with wrangler, then raises the sequence back, so no
 * new event takes an id receivers have seen or a cursor has passed. It stops
 * before the restore when the sequence cannot be noted.
 */
import { pathToFileURL } from "node:url";
import { parseArgs } from "node:util";
import { isDeployedEnvironment } from "./lib/environments";
import { operatorApi } from "./lib/operator-client";
import { runWrangler } from "./lib/wrangler";

/**
 * Ids left unused above the noted sequence: events written between the note
 * and the restore were seen by feeds and webhooks, then rewound away; the
 * ids after the raise must be above theirs too. Gaps in ids are harmless.
 */
export const RESTORE_MARGIN = 100_000n;

const USAGE =
  "Usage: npm run restore -- --env <staging|production> --timestamp <RFC 3339 or Unix seconds> --base-url " +
  "<https://host/v1> [--dry-run]   (OPERATOR_TOKEN set)";

export interface RestoreContext {
  out(line: string): void;
  err(line: string): void;
}

export async function runRestore(argv: string[], context: RestoreContext): Promise<number> {
  const { values } = parseArgs({
    args: argv,
    options: {
      env: { type: "string" },
      timestamp: { type: "string" },
      "base-url": { type: "string" },
      "dry-run": { type: "boolean", default: false },
    },
  });
  const env = values.env ?? "";
  if (!isDeployedEnvironment(env) || !values.timestamp || !values["base-url"]) {
    context.err(USAGE);
    return 2;
  }
  const api = operatorApi(values["base-url"], undefined);
  if (!api) {
    context.err(
      "OPERATOR_TOKEN is not set: the event sequence must be noted through the operator API before the restore.",
    );
    return 2;
  }
  const restore = ["d1", "time-travel", "restore", "DB", "--env", env, "--timestamp", values.timestamp];
  if (values["dry-run"]) {
    context.out(`1. note the order event sequence: GET ${api.baseUrl}/admin/order-events/sequence`);
    context.out(`2. wrangler ${restore.join(" ")}`);
    context.out(`3. raise it back: POST ${api.baseUrl}/admin/order-events/sequence`);
    return 0;
  }
  let noted: string;
  try {
    const answer = (await api.call("GET", "/order-events/sequence")) as { sequence?: string } | undefined;
    if (answer?.sequence === undefined) throw new Error(`the operator API at ${api.baseUrl} was not reachable`);
    noted = answer.sequence;
  } catch (error) {
    context.err(
      `Not restored: the event sequence could not be noted ` +
        `(${error instanceof Error ? error.message : String(error)}).`,
    );
    return 1;
  }
  const raiseTo = String(BigInt(noted) + RESTORE_MARGIN);
  context.out(`Order event sequence before the restore: ${noted}; it is raised to ${raiseTo} after it.`);
  const restored = runWrangler(restore);
  if (restored.status !== 0) {
    context.err(`The restore failed; nothing changed:\n${(restored.stderr || restored.stdout).trim()}`);
    return 1;
  }
  context.out(restored.stdout.trim());
  try {
    const answer = (await api.call("POST", "/order-events/sequence", { atLeast: raiseTo })) as
      | { sequence?: string }
      | undefined;
    if (answer?.sequence === undefined) throw new Error(`the operator API at ${api.baseUrl} was not reachable`);
    context.out(
      `Order event sequence raised back: ${answer.sequence}. New events take ids above every one handed out before ` +
        `the restore.`,
    );
    return 0;
  } catch (error) {
    context.err(
      `RESTORED, BUT THE EVENT SEQUENCE WAS NOT RAISED (${error instanceof Error ? error.message : String(error)}). ` +
        `Before any order changes, ` +
        `run: curl -X POST -H "Authorization: Bearer \${OPERATOR_TOKEN#*:}" -H "Content-Type: application/json" -d ` +
        `'{"atLeast":"${raiseTo}"}' ${api.baseUrl}/admin/order-events/sequence`,
    );
    return 1;
  }
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  process.exitCode = await runRestore(process.argv.slice(2), {
    out: (line) => console.log(line),
    err: (line) => console.error(line),
  });
}
