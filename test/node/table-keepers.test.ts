import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { tsFilesUnder } from "../support/source-files";

/**
 * One keeper per table (CONTRIBUTING.md#style): every statement that writes a D1 table is in one module, which a
 * reader finds by the table's name; an operation asks it, and no SQL fragment of the table's is exported past it.
 */
const KEEPERS: Record<string, string | string[]> = {
  webhook_endpoints: "src/webhook-delivery/endpoint-table.ts",
  webhook_endpoint_events: "src/webhook-delivery/endpoint-audit-rows.ts",
  endpoint_notices: "src/webhook-delivery/endpoint-notices.ts",
  host_locks: "src/webhook-delivery/host-lock-table.ts",
  webhook_dispatch: "src/webhook-delivery/dispatch-mark.ts",
  key_events: "src/keys/audit.ts",
  console_sessions: "src/console/session-table.ts",
  console_links: "src/console-kit/sign-in-links.ts",
  operators: "src/operator/operator-table.ts",
  operator_links: "src/operator/operator-links.ts",
  operator_sessions: "src/operator/operator-sessions.ts",
  orders: "src/orders/order-queries.ts",
  order_writes_hold: "src/orders/order-writes-hold.ts",
  order_event_retention: "src/events/prune-order-events.ts",
  // Written by the orders' triggers (migrations/); the Worker only prunes it and, after a restore, raises its sequence.
  order_events: ["src/events/event-sequence.ts", "src/events/prune-order-events.ts"],
};

/** The files whose statements write `table` (INSERT, UPDATE, DELETE, REPLACE), however they are spelt. */
function writersOf(files: readonly { path: string; text: string }[], table: string): string[] {
  const write = new RegExp(`\\b(?:INSERT(?: OR \\w+)? INTO|REPLACE INTO|UPDATE|DELETE FROM)\\s+"?${table}"?\\b`, "i");
  return files.filter(({ text }) => write.test(text)).map(({ path }) => path);
}

describe("each table's statements", () => {
  const files = tsFilesUnder("src").map((path) => ({ path, text: readFileSync(path, "utf8") }));

  it("cover every table the migrations make that the Worker writes", () => {
    const tables = readdirSync("migrations").flatMap((file) =>
      [...readFileSync(join("migrations", file), "utf8").matchAll(/CREATE TABLE "?(\w+)/g)].map((match) => match[1]!),
    );
    const written = [...new Set(tables)].filter((table) => writersOf(files, table).length > 0);
    expect(written.sort()).toEqual(Object.keys(KEEPERS).sort());
  });

  it.each(Object.entries(KEEPERS))("that write %s are in its keeper alone", (table, keeper) => {
    expect(writersOf(files, table)).toEqual([keeper].flat());
  });

  it("are found by a search that finds a write outside the keeper", () => {
    const planted = [
      { path: "a.ts", text: 'db.prepare("update webhook_endpoints SET url = ?1")' },
      { path: "b.ts", text: "`DELETE FROM webhook_endpoints WHERE id = ?1`" },
      { path: "c.ts", text: 'db.prepare("SELECT id FROM webhook_endpoints")' },
      { path: "d.ts", text: 'db.prepare("INSERT OR IGNORE INTO webhook_endpoints_by_host VALUES (?1)")' },
    ];
    expect(writersOf(planted, "webhook_endpoints")).toEqual(["a.ts", "b.ts"]);
  });

  it("keep their fragments to themselves: the endpoints' lock and columns are exported by no module", () => {
    for (const { path, text } of files) expect(text, path).not.toMatch(/^export const (LOCKED|COLUMNS)\b/m);
  });
});
