/**
 * Another system's way into D1: its HTTP API (`/d1/database/{id}/raw`), as a
 * back office calls Cloudflare's. Locally the runtime's Local Explorer serves
 * the same API (wrangler dev, or Miniflare with `unsafeLocalExplorer`) from
 * the runtime that owns the database, so these writes are serialized with
 * the service's as D1's are: a second process opening the SQLite files would
 * race the service's writes instead, and Miniflare's binding proxy answers
 * `prepare` and `bind` synchronously, stalling everything else in the
 * calling process (a webhook receiver, a clock) while it waits.
 */
import { fetchLocal } from "./local-service";

/** Runs one statement with its parameters; the rows it returns, as objects by column. */
export type Execute = (sql: string, params?: string[]) => Promise<Record<string, unknown>[]>;

/** The statement runner for the database bound as `binding` in the runtime at `origin`. */
export async function d1HttpApi(origin: string, binding = "DB"): Promise<Execute> {
  const api = `${origin}/cdn-cgi/local/explorer/api/d1/database`;
  const { result } = (await (await fetchLocal(api)).json()) as { result: { name: string; uuid: string }[] };
  const database = result.find((candidate) => candidate.name === binding);
  if (!database)
    throw new Error(
      `no D1 database bound as ${binding} at ${api}: ${result.map((candidate) => candidate.name).join(", ")}`,
    );
  return async (sql, params = []) => {
    const response = await fetchLocal(`${api}/${database.uuid}/raw`, {
      method: "POST",
      headers: { "Content-Type": "application/json" },
      body: JSON.stringify({ sql, params }),
    });
    const answer = (await response.json()) as {
      success: boolean;
      errors: unknown[];
      result?: { results?: { columns: string[]; rows: unknown[][] } }[];
    };
    if (!answer.success) throw new Error(`${sql}: ${JSON.stringify(answer.errors)}`);
    const { columns = [], rows = [] } = answer.result?.at(-1)?.results ?? {};
    return rows.map((row) => Object.fromEntries(columns.map((column, index) => [column, row[index]])));
  };
}
