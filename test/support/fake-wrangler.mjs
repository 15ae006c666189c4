#!/usr/bin/env node
/**
 * A stand-in for wrangler in the deploy's tests (STORE_ORDERS_WRANGLER names
 * it): records every call's arguments and answers like wrangler 4.86 for the
 * commands a release uses; its output-file entries are held to the installed
 * wrangler's own (test/node/fake-wrangler-fidelity.test.ts). Its state, one JSON file (FAKE_WRANGLER_STATE),
 * holds what is deployed (`split`: version id to percentage), the serving
 * version's tag, the calls so far, and `failOn`: calls whose arguments
 * contain one of these strings exit 1, as a failing wrangler does.
 */
import { appendFileSync, readFileSync, writeFileSync } from "node:fs";
import { pathToFileURL } from "node:url";

/**
 * One call, answered as wrangler would: `env` holds FAKE_WRANGLER_STATE and
 * WRANGLER_OUTPUT_FILE_PATH. The release's tests call it in-process too (a
 * process per call is most of their time); what it returns is what the
 * process would print and exit with.
 */
/** The environment a call names (`--env <name>`), as wrangler writes it in its output file. */
const envOf = (args) => (args.includes("--env") ? args[args.indexOf("--env") + 1] : undefined);

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
  if (first === "deployments" && second === "status") {
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
    save();
    appendFileSync(
      env.WRANGLER_OUTPUT_FILE_PATH,
      `${JSON.stringify({
        type: "wrangler-session",
        version: 1,
        wrangler_version: "4.86.0",
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
      })}\n`,
    );
    stdout = `Worker Version ID: ${state.newVersion}\n`;
  } else if (first === "versions" && second === "deploy") {
    state.split = Object.fromEntries(
      args
        .filter((arg) => /@\d+%$/.test(arg))
        .map((spec) => [spec.split("@")[0], Number(spec.split("@")[1].slice(0, -1))]),
    );
    save();
  } else if (first === "deploy") {
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
