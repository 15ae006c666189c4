/** An account's keys and plan, in its object's SQLite: the one home of their standing. Never pruned. */
import { ApiKeyRecord, standingOf } from "./key-record";
import type { Limits, Plan } from "./plans";

/** The most keys an account holds, about 450 bytes each; beyond, the longest-stopped go, and a key gone is unknown. */
export const MAX_ACCOUNT_KEYS = 1_000;

/** What belongs to the account rather than to one of its keys. */
export interface AccountPlan {
  plan: Plan;
  limits?: Limits;
}

/** A plan asked for: without `plan`, the account keeps its own, whatever the asker read. */
export type PlanChange = Partial<Pick<AccountPlan, "plan">> & Pick<AccountPlan, "limits">;

/** A key's row: its record without the account's plan. */
type KeyRow = Omit<ApiKeyRecord, "plan" | "limits">;

export class AccountKeys {
  readonly #sql: SqlStorage;

  /** Makes its tables where they are missing: on a new object. */
  constructor(sql: SqlStorage) {
    this.#sql = sql;
    this.#sql.exec(
      "CREATE TABLE IF NOT EXISTS account_keys (key_id TEXT PRIMARY KEY, record TEXT NOT NULL) WITHOUT ROWID",
    );
    this.#sql.exec("CREATE TABLE IF NOT EXISTS account_plan (one INTEGER PRIMARY KEY CHECK (one = 1), plan TEXT)");
  }

  plan(): AccountPlan | undefined {
    const row = this.#sql.exec<{ plan: string }>("SELECT plan FROM account_plan").toArray()[0];
    return row && (JSON.parse(row.plan) as AccountPlan);
  }

  setPlan(change: PlanChange): void {
    const plan: AccountPlan = {
      plan: change.plan ?? this.plan()!.plan,
      ...(change.limits && { limits: change.limits }),
    };
    this.#sql.exec("INSERT OR REPLACE INTO account_plan (one, plan) VALUES (1, ?)", JSON.stringify(plan));
  }

  get(keyId: string): ApiKeyRecord | undefined {
    const row = this.#sql.exec<{ record: string }>("SELECT record FROM account_keys WHERE key_id = ?", keyId).toArray();
    return row[0] && this.#withPlan(row[0].record, this.plan()!);
  }

  /** The keys after `after` in id order, at most `limit`, and whether more follow. */
  page(after: string, limit: number): { keys: ApiKeyRecord[]; more: boolean } {
    const rows = this.#sql
      .exec<{ record: string }>(
        "SELECT record FROM account_keys WHERE key_id > ? ORDER BY key_id LIMIT ?",
        after,
        limit + 1,
      )
      .toArray();
    const plan = this.plan();
    if (!plan) return { keys: [], more: false };
    return { keys: rows.slice(0, limit).map((row) => this.#withPlan(row.record, plan)), more: rows.length > limit };
  }

  /** Every key, in id order: MAX_ACCOUNT_KEYS at most. */
  all(): ApiKeyRecord[] {
    const plan = this.plan();
    if (!plan) return [];
    return this.#sql
      .exec<{ record: string }>("SELECT record FROM account_keys ORDER BY key_id")
      .toArray()
      .map((row) => this.#withPlan(row.record, plan));
  }

  /** A new key; the account's first sets its plan. False when the id is taken. */
  add(record: ApiKeyRecord): boolean {
    const { plan, limits, ...row } = record;
    const added = this.#sql.exec(
      "INSERT INTO account_keys (key_id, record) VALUES (?, ?) ON CONFLICT DO NOTHING",
      record.id,
      JSON.stringify(row),
    ).rowsWritten;
    if (added > 0 && !this.plan()) this.setPlan({ plan, ...(limits && { limits }) });
    return added > 0;
  }

  /** Room for one more key: the longest-stopped go while at MAX_ACCOUNT_KEYS. Their ids, or null when all are live. */
  makeRoom(now: number): string[] | null {
    const keys = this.all();
    const over = keys.length - MAX_ACCOUNT_KEYS + 1;
    if (over <= 0) return [];
    const stoppedAt = (key: ApiKeyRecord) => key.revokedAt ?? key.expiresAt!;
    const stopped = keys
      .filter((key) => standingOf(key, now) !== "live")
      .sort((a, b) => (stoppedAt(a) < stoppedAt(b) ? -1 : 1));
    if (stopped.length < over) return null;
    const gone = stopped.slice(0, over).map((key) => key.id);
    for (const id of gone) this.#sql.exec("DELETE FROM account_keys WHERE key_id = ?", id);
    return gone;
  }

  /** A key's fields replaced (never its plan: setPlan). */
  put(record: ApiKeyRecord): void {
    const { plan: _, limits: __, ...row } = record;
    this.#sql.exec("UPDATE account_keys SET record = ? WHERE key_id = ?", JSON.stringify(row), record.id);
  }

  /** A row with the account's plan, read once by the caller for all the rows it reads. */
  #withPlan(text: string, plan: AccountPlan): ApiKeyRecord {
    const row = JSON.parse(text) as KeyRow;
    return ApiKeyRecord.parse({ ...row, plan: plan.plan, ...(plan.limits && { limits: plan.limits }) });
  }
}
