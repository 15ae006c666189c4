/**
 * What `npm run keys -- update` writes: a plan or limits change reaches every
 * key that spends the same budget (a rotated pair), a name or expiry only the
 * key named, and each key reached gets its own audit row naming all of them
 * (docs/operations.md#api-keys).
 */
import type { KeyEvent } from "../../src/keys/audit";
import type { ApiKeyRecord } from "../../src/keys/api-key-record";
import type { StoredRecord } from "./key-store";

/** The fields that belong to the budget rather than to one key. */
const BUDGET_FIELDS = ["plan", "limits", "limitsSetAt"] as const;

function applied(record: ApiKeyRecord, changes: Partial<ApiKeyRecord>): ApiKeyRecord {
  const next = { ...record, ...changes };
  // A plan change without new limits drops the old override.
  if ("limits" in changes && changes.limits === undefined) delete next.limits;
  return next;
}

/** The records to write, the named key's first, and the audit rows for them. */
export function budgetUpdate(named: StoredRecord, sharing: readonly StoredRecord[], changes: Partial<ApiKeyRecord>) {
  const budgetChanges = Object.fromEntries(
    Object.entries(changes).filter(([field]) => (BUDGET_FIELDS as readonly string[]).includes(field)),
  );
  const records = [
    { hash: named.hash, record: applied(named.record, changes) },
    ...sharing.map(({ hash, record }) => ({ hash, record: applied(record, budgetChanges) })),
  ];
  const reached = records.map(({ record }) => record.id);
  const events: Omit<KeyEvent, "id" | "at" | "actor" | "outcome">[] = records.map(({ record }, index) => ({
    operation: "update",
    keyId: record.id,
    changes: { ...(index === 0 ? changes : budgetChanges), ...(reached.length > 1 && { reached }) },
  }));
  return { records, events };
}
