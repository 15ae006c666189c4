/**
 * The keys command's way to the operator API (README, "Operator API"): the
 * service at --base-url, or for local keys the one `npm start` runs on port
 * 8787, with the token from OPERATOR_TOKEN or, locally, from .dev.vars.
 */
import { existsSync, readFileSync } from "node:fs";

export interface OperatorApi {
  /** The answer's JSON, or undefined when the service could not be reached. */
  call(method: "GET" | "POST", path: string, body?: unknown): Promise<unknown | undefined>;
  readonly baseUrl: string;
}

/** The token part of `<name>:<token>`. */
const tokenOf = (value: string) => value.slice(value.indexOf(":") + 1);

function localToken(): string | undefined {
  if (!existsSync(".dev.vars")) return undefined;
  return /^OPERATOR_TOKEN="?([^"\n]+)"?$/m.exec(readFileSync(".dev.vars", "utf8"))?.[1];
}

export function operatorApi(baseUrl: string | undefined, local: boolean): OperatorApi | undefined {
  const root = (baseUrl ?? (local ? "http://127.0.0.1:8787" : undefined))?.replace(/\/v1\/?$/, "").replace(/\/$/, "");
  const configured = process.env.OPERATOR_TOKEN ?? (local ? localToken() : undefined);
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
