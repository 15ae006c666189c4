#!/usr/bin/env node
/**
 * A stand-in for wrangler in the deploy's tests (STORE_ORDERS_WRANGLER names
 * it): records every call's arguments and answers like the installed wrangler for the
 * commands a release uses; its output-file entries are held to the installed
 * wrangler's own (test/node/fake-wrangler-fidelity.test.ts). Its state, one JSON file (FAKE_WRANGLER_STATE),
 * holds what is deployed (`split`: version id to percentage), the serving
 * version's tag, the calls so far, and `failOn`: calls whose arguments
 * contain one of these strings exit 1, as a failing wrangler does. With
 * `exists: false` the Worker has never been released: wrangler's reads of it
 * fail as they do then, until an upload or a deploy makes it; `secrets` are
 * the names it has (an upload's `--secrets-file` adds its own).
 */
import { appendFileSync, readFileSync, statSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import { pathToFileURL } from "node:url";

const WRANGLER_VERSION = createRequire(import.meta.url)("wrangler/package.json").version;
/** The bundle's size as wrangler reports it, raw and gzipped. */
const BUNDLE_SIZE = { raw_bytes: 1285884, gzip_bytes: 260669 };

/**
 * One call, answered as wrangler would: `env` holds FAKE_WRANGLER_STATE and
 * WRANGLER_OUTPUT_FILE_PATH. The release's tests call it in-process too (a
 * process per call is most of their time); what it returns is what the
 * process would print and exit with.
 */
/** The environment a call names (`--env <name>`), as wrangler writes it in its output file. */
const envOf = (args) => (args.includes("--env") ? args[args.indexOf("--env") + 1] : undefined);

/** The D1 database `wrangler d1 info <name> --json` prints: the API's record of it. */
export const databaseInfo = (name) => ({
  uuid: "5e6f0c1e-0000-4000-8000-000000000001",
  name,
  created_at: "2026-12-06T10:00:00.000Z",
  version: "production",
  num_tables: 0,
  database_size: 0,
  read_replication: { mode: "disabled" },
});

export function answerAsWrangler(args, env) {
  const file = env.FAKE_WRANGLER_STATE;
  const state = JSON.parse(readFileSync(file, "utf8"));
  const line = args.join(" ");
  state.calls.push(args);
  const save = () => writeFileSync(file, JSON.stringify(state, null, 2));
  save();
  let stdout = "";

  if (state.failOn.some((part) => line.includes(part))) {
    return { status: 1, stdout, stderr: `✘ [ERROR] A request to the Cloudflare API failed (fake: ${line})\n` };
  }
  const [first, second] = args;
  const missing = state.exists === false;
  if (missing && first === "deployments") {
    // Cloudflare's API error for a script that does not exist, as wrangler prints an API error's note.
    return {
      status: 1,
      stdout,
      stderr:
        `✘ [ERROR] A request to the Cloudflare API (/accounts/${"0".repeat(32)}/workers/scripts/${state.worker}/` +
        `deployments) failed.\n\n  This Worker does not exist on your account. [code: 10007]\n`,
    };
  }
  if (missing && first === "secret") {
    return {
      status: 1,
      stdout,
      stderr:
        `✘ [ERROR] Worker "${state.worker}" (env: ${envOf(args)}) not found.\n\nIf this is a new Worker, run ` +
        "`wrangler deploy` first to create it.\nOtherwise, check that the Worker name is correct and you're logged " +
        "into the right account.\n",
    };
  }
  if (first === "deployments" && Object.keys(state.split).length === 0) {
    // An upload made the Worker, and nothing was deployed: wrangler's own words.
    return { status: 1, stdout, stderr: `✘ [ERROR] The Worker ${state.worker} has no deployments.\n` };
  }
  if (first === "secret" && second === "list") {
    stdout = JSON.stringify(state.secrets.map((name) => ({ name, type: "secret_text" })));
  } else if (first === "d1" && second === "info") {
    stdout = JSON.stringify(databaseInfo(args[2]), null, 2);
  } else if (first === "deployments" && second === "status") {
    const versions = Object.entries(state.split).map(([version_id, percentage]) => ({ version_id, percentage }));
    stdout = JSON.stringify({ id: "deployment", versions }, null, 2);
  } else if (first === "versions" && second === "view") {
    stdout = JSON.stringify(
      { id: args[2], annotations: { "workers/tag": state.tags[args[2]] ?? "", "workers/message": "" } },
      null,
      2,
    );
  } else if (first === "versions" && second === "upload") {
    const tag = args[args.indexOf("--tag") + 1];
    state.tags[state.newVersion] = tag;
    state.exists = true;
    if (args.includes("--secrets-file")) {
      const file = args[args.indexOf("--secrets-file") + 1];
      const secrets = JSON.parse(readFileSync(file, "utf8"));
      state.secrets = [...new Set([...state.secrets, ...Object.keys(secrets)])];
      state.secretsFileMode = (statSync(file).mode & 0o777).toString(8);
    }
    save();
    if (env.WRANGLER_OUTPUT_FILE_PATH) {
      appendFileSync(
        env.WRANGLER_OUTPUT_FILE_PATH,
        `${JSON.stringify({
          type: "wrangler-session",
          version: 1,
          wrangler_version: WRANGLER_VERSION,
          command_line_args: args,
          log_file_path: null,
        })}\n`,
      );
      appendFileSync(
        env.WRANGLER_OUTPUT_FILE_PATH,
        `${JSON.stringify({
          type: "version-upload",
          version: 1,
          worker_name: state.worker,
          worker_tag: null,
          version_id: state.newVersion,
          preview_url: null,
          preview_alias_url: null,
          wrangler_environment: envOf(args),
          worker_name_overridden: false,
          bundle_size: BUNDLE_SIZE,
        })}\n`,
      );
    }
    stdout = `Worker Version ID: ${state.newVersion}\n`;
  } else if (first === "versions" && second === "deploy") {
    state.split = Object.fromEntries(
      args
        .filter((arg) => /@\d+%$/.test(arg))
        .map((spec) => [spec.split("@")[0], Number(spec.split("@")[1].slice(0, -1))]),
    );
    save();
  } else if (first === "deploy") {
    state.exists = true;
    state.split = { [state.newVersion]: 100 };
    if (args.includes("--tag")) state.tags[state.newVersion] = args[args.indexOf("--tag") + 1];
    save();
    if (env.WRANGLER_OUTPUT_FILE_PATH) {
      appendFileSync(
        env.WRANGLER_OUTPUT_FILE_PATH,
        `${JSON.stringify({
          type: "deploy",
          version: 1,
          worker_name: state.worker,
          worker_tag: null,
          version_id: state.newVersion,
          targets: [],
          wrangler_environment: envOf(args),
          worker_name_overridden: false,
          bundle_size: BUNDLE_SIZE,
        })}\n`,
      );
    }
  }
  return { status: 0, stdout, stderr: "" };
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const { status, stdout, stderr } = answerAsWrangler(process.argv.slice(2), process.env);
  process.stdout.write(stdout);
  process.stderr.write(stderr);
  process.exitCode = status;
}
