/**
 * The keys command's way to the operator API (docs/operations.md#operator-api): the
 * service at --base-url, or for local keys the one `npm start` runs on port
 * 8787, with the token from OPERATOR_TOKEN or, locally, from the state
 * folder's operator.env (made by `npm start`); where Cloudflare Access guards
 * it, with an Access service token (CF_ACCESS_CLIENT_ID and
 * CF_ACCESS_CLIENT_SECRET), which Access turns into its assertion.
 */
import { existsSync, readFileSync } from "node:fs";
import { join } from "node:path";

export interface OperatorApi {
  /** The answer's JSON, or undefined when the service could not be reached. */
  call(method: "GET" | "POST", path: string, body?: unknown): Promise<unknown | undefined>;
  readonly baseUrl: string;
}

/**
 * What telling the operator API came to: done (where), or why not, as it was (not configured, not reachable, or its
 * answer).
 */
export type Told = { ok: true; at: string; answer: unknown } | { ok: false; problem: string };

/** A POST to the operator API whose failure is reported, never thrown: it follows a KV write that already happened. */
export async function tellOperatorApi(api: OperatorApi | undefined, path: string, body?: unknown): Promise<Told> {
  if (!api) return { ok: false, problem: "no operator API configured: pass --base-url and OPERATOR_TOKEN" };
  try {
    const answer = await api.call("POST", path, body);
    return answer === undefined
      ? { ok: false, problem: `the operator API at ${api.baseUrl} was not reachable` }
      : { ok: true, at: api.baseUrl, answer };
  } catch (error) {
    return { ok: false, problem: error instanceof Error ? error.message : String(error) };
  }
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

/** How the keys command signs in: an operator token, or an Access service token; undefined with neither. */
function credentialHeaders(local: { stateDir: string | undefined } | undefined): Record<string, string> | undefined {
  const { CF_ACCESS_CLIENT_ID: clientId, CF_ACCESS_CLIENT_SECRET: clientSecret } = process.env;
  if (clientId && clientSecret) return { "CF-Access-Client-Id": clientId, "CF-Access-Client-Secret": clientSecret };
  const configured = process.env.OPERATOR_TOKEN ?? (local ? localToken(local.stateDir) : undefined);
  return configured ? { Authorization: `Bearer ${tokenOf(configured)}` } : undefined;
}

/**
 * The operator API for `--env local` (with its state folder) or a deployed environment; undefined without a URL or a
 * credential.
 */
export function operatorApi(
  baseUrl: string | undefined,
  local: { stateDir: string | undefined } | undefined,
): OperatorApi | undefined {
  const root = (baseUrl ?? (local ? "http://127.0.0.1:8787" : undefined))?.replace(/\/v1\/?$/, "").replace(/\/$/, "");
  const credential = credentialHeaders(local);
  if (!root || !credential) return undefined;
  return {
    baseUrl: root,
    async call(method, path, body) {
      let response: Response;
      try {
        response = await fetch(`${root}/admin${path}`, {
          method,
          headers: { ...credential, "Content-Type": "application/json" },
          ...(body !== undefined && { body: JSON.stringify(body) }),
        });
      } catch {
        return undefined;
      }
      const answer = (await response.json().catch(() => ({}))) as { message?: string };
      if (!response.ok)
        throw new Error(`the operator API answered ${response.status}: ${answer.message ?? "no message"}`);
      return answer;
    },
  };
}
