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
});
