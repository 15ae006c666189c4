/**
 * D1 read replication, which no wrangler command or configuration key sets: Cloudflare's "Update D1 Database" call
 * (PUT /accounts/{account_id}/d1/database/{database_id}, body `{"read_replication": {"mode": "auto"}}`).
 */
import type { AnalyticsAccess } from "../../src/lib/cloudflare-api";

/** Turns read replication on for the database `uuid`; fails with Cloudflare's own words when it is refused. */
export async function enableReadReplication(access: AnalyticsAccess, uuid: string, timeoutMs = 30_000): Promise<void> {
  const base = access.apiBase.replace(/\/+$/, "");
  const url = `${base}/accounts/${encodeURIComponent(access.accountId)}/d1/database/${encodeURIComponent(uuid)}`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: "PUT",
      headers: { Authorization: `Bearer ${access.apiToken}`, "Content-Type": "application/json" },
      body: JSON.stringify({ read_replication: { mode: "auto" } }),
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new Error(`Cloudflare's API could not be reached (${(error as Error).cause ?? (error as Error).message})`);
  }
  const answer = (await response.json().catch(() => undefined)) as
    | { success?: boolean; errors?: { message: string }[]; result?: { read_replication?: { mode?: string } } }
    | undefined;
  if (!response.ok || answer?.success !== true || answer.result?.read_replication?.mode !== "auto") {
    const why = answer?.errors?.map((error) => error.message).join("; ") || `HTTP ${response.status}`;
    throw new Error(`Cloudflare refused to turn read replication on: ${why}`);
  }
}
