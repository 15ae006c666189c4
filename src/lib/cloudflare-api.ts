/** Cloudflare's Analytics Engine SQL API, for the Worker's traffic view and the release health gate. */
export const CLOUDFLARE_API = "https://api.cloudflare.com/client/v4";

export interface AnalyticsAccess {
  accountId: string;
  /** An API token that may read Account Analytics. */
  apiToken: string;
  /** Cloudflare's API (CLOUDFLARE_API_BASE_URL, as wrangler reads it). */
  apiBase: string;
}

/** Runs `sql` on the account's SQL API; any failure is an error with the reason. */
export async function runAnalyticsSql(access: AnalyticsAccess, sql: string, timeoutMs = 30_000): Promise<unknown> {
  const base = access.apiBase.replace(/\/+$/, "");
  const url = `${base}/accounts/${encodeURIComponent(access.accountId)}/analytics_engine/sql`;
  let response: Response;
  try {
    response = await fetch(url, {
      method: "POST",
      headers: { Authorization: `Bearer ${access.apiToken}` },
      body: sql,
      signal: AbortSignal.timeout(timeoutMs),
    });
  } catch (error) {
    throw new Error(
      `the Analytics Engine SQL API could not be reached (${(error as Error).cause ?? (error as Error).message})`,
    );
  }
  const text = await response.text();
  if (!response.ok) throw new Error(`the Analytics Engine SQL API answered ${response.status}: ${text.slice(0, 200)}`);
  try {
    return JSON.parse(text);
  } catch {
    throw new Error(`the Analytics Engine SQL API answered something that is not JSON: ${text.slice(0, 200)}`);
  }
}
