import { readdirSync, readFileSync } from "node:fs";
import { DatabaseSync } from "node:sqlite";
import { describe, expect, it } from "vitest";

/**
 * The migrations (CONTRIBUTING.md#migrations): numbered in order from the baseline, and each one after it applies on
 * a database the earlier ones made, holding the demo data `npm start` loads: the upgrade path of every schema change.
 * SQLite here, as D1 is: a migration that needs D1 itself gets a test of its own.
 */
const names = readdirSync("migrations")
  .filter((name) => name.endsWith(".sql"))
  .sort();
const migration = (name: string) => readFileSync(`migrations/${name}`, "utf8");
const schemaOf = (db: DatabaseSync) =>
  db.prepare("SELECT type, name, sql FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name").all();

describe("the migrations", () => {
  it("start with the baseline and are numbered one after another", () => {
    expect(names[0]).toBe("0001_baseline.sql");
    for (const [index, name] of names.entries())
      expect(name).toMatch(new RegExp(`^${String(index + 1).padStart(4, "0")}_[a-z0-9_]+\\.sql$`));
  });

  it("each apply on the database the earlier ones made, with the demo data in it, and keep its rows", () => {
    const db = new DatabaseSync(":memory:");
    db.exec(migration(names[0]!));
    db.exec(readFileSync("scripts/demo-data.sql", "utf8"));
    const orders = () => db.prepare("SELECT count(*) AS n FROM orders").get()!.n;
    const before = orders();
    expect(before).toBeGreaterThan(0);
    for (const name of names.slice(1)) {
      expect(() => db.exec(migration(name)), name).not.toThrow();
      expect(orders(), name).toBe(before);
    }
    // The same schema as the migrations make on a new database: an upgrade ends where a new deployment starts.
    const fresh = new DatabaseSync(":memory:");
    for (const name of names) fresh.exec(migration(name));
    expect(schemaOf(db)).toEqual(schemaOf(fresh));
  });

  it("0002 keeps on each endpoint which key last set its URL, secret and types, from its audit", () => {
    const db = new DatabaseSync(":memory:");
    db.exec(migration("0001_baseline.sql"));
    db.exec(
      "INSERT INTO webhook_endpoints (id, budget, url, types, status, created_at, from_seq, secret_sealed) " +
        "VALUES ('we_1', 'key_A', 'https://a.example', 'order.cancelled', 'enabled', '2026-01-01', 0, 's')",
    );
    const audit = db.prepare(
      "INSERT INTO webhook_endpoint_events (event_id, at, operation, endpoint_id, changes, actor) " +
        "VALUES (?, ?, ?, 'we_1', ?, ?)",
    );
    audit.run("e1", "2026-01-01", "create", "{}", "key:key_leaked");
    audit.run("e2", "2026-01-02", "update", '{"types":["order.cancelled"]}', "key:key_owner");
    audit.run("e3", "2026-01-03", "rotate_secret", "{}", "operator");
    db.exec(migration("0002_endpoint_setters.sql"));
    expect(db.prepare("SELECT url_set_by, secret_set_by, types_set_by FROM webhook_endpoints").get()).toEqual({
      url_set_by: "key_leaked",
      secret_set_by: null,
      types_set_by: "key_owner",
    });
  });
});
