import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import { callDependency } from "../lib/call-dependency";
import { isUsable, type ApiKeyRecord } from "../account/key-record";
import type { KeyStanding } from "../account/policy";
import { budgetKeysPage, MAX_KEYS_PAGE } from "./budget-keys";
import { storeKeyRecord } from "./kv-layout";
import { findApiKeyById } from "./lookup";

/** What belongs to a budget rather than to one key: the plan and limits, and when they were set. */
export type BudgetFields = Pick<ApiKeyRecord, "plan" | "limits" | "limitsSetAt">;

/**
 * A record as its budget's object knows it: an end the object was told (a rotation's grace, an update's expiry) that
 * the record read from KV does not show yet is the record's, so writing it back never drops that end.
 */
export function withKnownEnd(record: ApiKeyRecord, standing: Pick<KeyStanding, "endsAt">): ApiKeyRecord {
  if (standing.endsAt === undefined) return record;
  const known = new Date(standing.endsAt).toISOString();
  return record.expiresAt !== undefined && record.expiresAt <= known ? record : { ...record, expiresAt: known };
}

/** A record with changes applied: a field given as undefined (a plan's limits replacing a key's own) is dropped. */
export function withChanges(record: ApiKeyRecord, changes: Partial<ApiKeyRecord>): ApiKeyRecord {
  const next = { ...record, ...changes };
  for (const [field, value] of Object.entries(changes))
    if (value === undefined) delete next[field as keyof typeof next];
  return next;
}

/**
 * The budget's fields written into every live key's record of the budget but `except` (written by its caller), so
 * they hold after the object forgets the budget (the day it last counted, and 10 minutes). A record stamped so already
 * is left as it is. Returns the ids written.
 */
export async function writeBudgetFields(
  c: Context<AppEnv>,
  budget: string,
  fields: Partial<BudgetFields> & { limitsSetAt: string },
  except?: string,
): Promise<string[]> {
  const kv = c.env.API_KEYS;
  const { keys } = await budgetKeysPage(kv, budget, { limit: MAX_KEYS_PAGE });
  const written: string[] = [];
  for (const key of keys.filter(
    (each) => each.id !== except && isUsable(each) && each.limitsSetAt !== fields.limitsSetAt,
  )) {
    // A record read here may be a minute old: written back whole, it would undo a revocation or a rotation made
    // meanwhile elsewhere. The budget's object knows every one of the last 10 minutes: such a key is left alone.
    const standing = await callDependency("rate limiter", () => c.env.ACCOUNTS.getByName(budget).standing(key.id));
    if (standing.ended || standing.rotatedAway) continue;
    const stored = await findApiKeyById(kv, key.id);
    if (stored && isUsable(stored.record) && stored.record.rotatedTo === undefined) {
      await storeKeyRecord(kv, stored.hash, withChanges(withKnownEnd(stored.record, standing), fields));
      written.push(key.id);
    }
  }
  return written;
}
