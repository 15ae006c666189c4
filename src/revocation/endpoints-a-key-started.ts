/**
 * Which of a budget's webhook endpoints a key started (docs/api.md#what-a-leak-ends):
 * those it made, or whose URL, secret or types it was the last to change, as
 * the endpoints' audit says. Whoever held a leaked key could have aimed such
 * an endpoint anywhere; one whose every part the owner has set since is the
 * owner's again. A row whose outcome is unknown may have taken effect, so it
 * counts. Pure: the rows in, the endpoint ids out.
 */

/** An endpoint's audit row as the chooser reads it (migrations/0001_baseline.sql). */
export interface EndpointAuditRow {
  endpoint_id: string;
  operation: string;
  /** JSON: for an update, the fields the owner sent. */
  changes: string;
  actor: string;
}

/** What each operation sets of an endpoint: the parts whose last setter is looked for. */
function partsSetBy(row: EndpointAuditRow): ("url" | "secret" | "types")[] {
  if (row.operation === "create") return ["url", "secret", "types"];
  if (row.operation === "rotate_secret") return ["secret"];
  if (row.operation !== "update") return [];
  const changes = JSON.parse(row.changes) as Record<string, unknown>;
  return (["url", "types"] as const).filter((part) => changes[part] !== undefined);
}

/** The endpoints `keyId` started, from their audit rows in the order they were written. */
export function endpointsStartedBy(rows: readonly EndpointAuditRow[], keyId: string): string[] {
  const lastSetter = new Map<string, Map<string, string>>();
  for (const row of rows) {
    const parts = lastSetter.get(row.endpoint_id) ?? new Map<string, string>();
    for (const part of partsSetBy(row)) parts.set(part, row.actor);
    lastSetter.set(row.endpoint_id, parts);
  }
  const actor = `key:${keyId}`;
  return [...lastSetter].filter(([, parts]) => [...parts.values()].includes(actor)).map(([id]) => id);
}
