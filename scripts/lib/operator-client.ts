/**
 * The keys command's way to the operator API (docs/operations.md#operator-api): the
 * service at --base-url, or for local keys the one `npm start` runs on port
 * 8787, with the token from OPERATOR_TOKEN or, locally, from the state
 * folder's operator.env (made by `npm start`).
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface OperatorApi {
  /** The answer's JSON, or undefined when the service could not be reached. */
  call(method: "GET" | "POST", path: string, body?: unknown): Promise<unknown | undefined>;
  readonly baseUrl: string;
}

/** The token part of `<name>:<token>`. */
const tokenOf = (value: string) => value.slice(value.indexOf(":") + 1);

/** Where `npm start` keeps the local operator token: beside the local state it runs on. */
export const operatorEnvFile = (stateDir: string | undefined) => join(stateDir ?? ".wrangler/state", "operator.env");

function localToken(stateDir: string | undefined): string | undefined {
  const file = operatorEnvFile(stateDir);
  if (!existsSync(file)) return undefined;
  return /^OPERATOR_TOKEN="?([^"\n]+)"?$/m.exec(readFileSync(file, "utf8"))?.[1];
}

/** The operator API for `--env local` (with its state folder) or a deployed environment; undefined without a URL or token. */
export function operatorApi(baseUrl: string | undefined, local: { stateDir: string | undefined } | undefined): OperatorApi | undefined {
  const root = (baseUrl ?? (local ? "http://127.0.0.1:8787" : undefined))?.replace(/\/v1\/?$/, "").replace(/\/$/, "");
  const configured = process.env.OPERATOR_TOKEN ?? (local ? localToken(local.stateDir) : undefined);
  if (!root || !configured) return undefined;
  return {
    baseUrl: root,
    async call(method, path, body) {
      let response: Response;
      try {
        response = await fetch(`${root}/admin${path}`, {
          method,
          headers: { Authorization: `Bearer ${tokenOf(configured)}`, "Content-Type": "application/json" },
          ...(body !== undefined && { body: JSON.stringify(body) }),
        });
      } catch {
        return undefined;
      }
      const answer = (await response.json().catch(() => ({}))) as { message?: string };
      if (!response.ok) throw new Error(`the operator API answered ${response.status}: ${answer.message ?? "no message"}`);
      return answer;
    },
  };
}
