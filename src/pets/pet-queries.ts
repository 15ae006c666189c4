import { callDependency } from "../lib/call-dependency";

/** A pet as D1 gives it back: every column as TEXT, as for orders, to keep the int64 id exact. */
interface PetRow {
  id: string;
  name: string;
  status: string | null;
}

export async function findPet(db: D1Database, id: string): Promise<PetRow | null> {
  return callDependency("D1", () =>
    db
      .prepare(
        "SELECT CAST(id AS TEXT) AS id, CAST(name AS TEXT) AS name, CAST(status AS TEXT) AS status FROM pets WHERE " +
          "pets.id = ?1",
      )
      .bind(id)
      .first<PetRow>(),
  );
}
