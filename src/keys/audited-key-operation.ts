import { callDependency } from "../lib/call-dependency";
import {
  DELETE_KEY_EVENT,
  INSERT_KEY_EVENT,
  MARK_KEY_EVENT_UNKNOWN,
  keyEventValues,
  withAuditRow,
  type KeyEvent,
} from "./audit";

/**
 * Does one operation on a key with its audit row in the worker's D1 (the row
 * first): withAuditRow() bound to the database. The operation is handed its
 * row's id (addKeyEventChanges() adds what it learned).
 */
export async function auditedKeyOperation<T>(
  db: D1Database,
  event: Omit<KeyEvent, "id" | "at">,
  operation: (rowId: number) => Promise<T>,
): Promise<T> {
  const row: KeyEvent = { id: crypto.randomUUID(), at: new Date().toISOString(), ...event };
  return withAuditRow(
    async () =>
      (await callDependency("D1", () =>
        db
          .prepare(INSERT_KEY_EVENT)
          .bind(...keyEventValues(row))
          .first<number>("id"),
      ))!,
    {
      remove: (rowId) => callDependency("D1", () => db.prepare(DELETE_KEY_EVENT).bind(rowId).run()),
      markUnknown: (rowId) => callDependency("D1", () => db.prepare(MARK_KEY_EVENT_UNKNOWN).bind(rowId).run()),
    },
    operation,
  );
}

/**
 * Adds to an audit row's changes what its operation learned as it went (a leak's ending: what it ended, and that it
 * did).
 */
export const addKeyEventChanges = (db: D1Database, rowId: number, added: Record<string, unknown>) =>
  callDependency("D1", () =>
    db
      .prepare("UPDATE key_events SET changes = json_patch(changes, ?2) WHERE id = ?1")
      .bind(rowId, JSON.stringify(added))
      .run(),
  );
