import { callDependency } from "../lib/dependency";

/** A pet as D1 gives it back; the id as TEXT, as for orders, to keep int64 exact. */
export interface PetRow {
  id: string;
  name: string;
  status: string | null;
}

export async function findPet(db: D1Database, id: string): Promise<PetRow | null> {
  return callDependency("D1", () =>
    db.prepare("SELECT CAST(id AS TEXT) AS id, name, status FROM pets WHERE pets.id = ?1").bind(id).first<PetRow>(),
  );
}
