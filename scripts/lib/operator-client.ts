/**
 * The scripts' way to the operator API (docs/operations.md#operator-api): the
 * service at --base-url, or for the local state the `npm start` serving it
 * (serving-record.ts), with the token from OPERATOR_TOKEN or, locally, from
 * the state folder's operator.env (made by `npm start`); where Cloudflare
 * Access guards it, with an Access service token (CF_ACCESS_CLIENT_ID and
 * CF_ACCESS_CLIENT_SECRET), which Access turns into its assertion.
 */
import { existsSync, readFileSync } from "node:fs";
import { operatorEnvFile } from "./local-secrets";
import { servingUrl } from "./serving-record";

export interface OperatorApi {
  /** The answer's JSON, or undefined when the service could not be reached. */
  /** Throws the service's message on an answer that is not a success. */
  call(method: "GET" | "POST" | "PATCH", path: string, body?: unknown): Promise<unknown | undefined>;
  readonly baseUrl: string;
}

/** The token part of `<name>:<token>`. */
const tokenOf = (value: string) => value.slice(value.indexOf(":") + 1);

function localToken(stateDir: string | undefined): string | undefined {
  const file = operatorEnvFile(stateDir);
  if (!existsSync(file)) return undefined;
  return /^OPERATOR_TOKEN="?([^"\n]+)"?$/m.exec(readFileSync(file, "utf8"))?.[1];
}

/** How the keys command signs in: an operator token, or an Access service token; undefined with neither. */
function credentialHeaders(local: { stateDir: string | undefined } | undefined): Record<string, string> | undefined {
  // Locally, only the state's own token: a deployed environment's credential in the shell never goes to a local port.
  const configured = local ? localToken(local.stateDir) : process.env.OPERATOR_TOKEN;
  const { CF_ACCESS_CLIENT_ID: clientId, CF_ACCESS_CLIENT_SECRET: clientSecret } = process.env;
  if (!local && clientId && clientSecret)
    return { "CF-Access-Client-Id": clientId, "CF-Access-Client-Secret": clientSecret };
  return configured ? { Authorization: `Bearer ${tokenOf(configured)}` } : undefined;
}

const LOOPBACK = new Set(["localhost", "127.0.0.1", "[::1]"]);

/**
 * The operator API for `--env local` (with its state folder) or a deployed environment; undefined without a URL or a
 * credential.
 */
export function operatorApi(
  baseUrl: string | undefined,
  local: { stateDir: string | undefined } | undefined,
): OperatorApi | undefined {
  const root = (baseUrl ?? (local ? servingUrl(local.stateDir) : undefined))
    ?.replace(/\/v1\/?$/, "")
    .replace(/\/$/, "");
  const credential = credentialHeaders(local);
  if (!root || !credential) return undefined;
  const { protocol, hostname } = new URL(root);
  if (protocol !== "https:" && !LOOPBACK.has(hostname))
    throw new Error(`${root} is not https: an operator's credential is never sent in the clear.`);
  return {
    baseUrl: root,
    async call(method, path, body) {
      let response: Response;
      try {
        response = await fetch(`${root}/admin${path}`, {
          method,
          // A redirect is answered as what it is, never followed with the credential to wherever it points.
          redirect: "manual",
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
