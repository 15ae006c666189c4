/**
 * The answers an account's writes gave, by Idempotency-Key (docs/api.md#retrying-safely), in its object's SQLite: one
 * place, consistent at once, no D1 write. An answer is its key id's own. The rules are plain functions (`decideRetry`);
 * the class is their storage.
 */

/** How long an answer is kept: a day, as Stripe keeps its. */
export const KEEP_MS = 24 * 60 * 60 * 1000;
/** How long a first request may run before a retry takes its key: longer than any write. */
export const RUNNING_MS = 60_000;
/** The most an account keeps; beyond it the oldest goes first. */
export const MAX_KEPT = 10_000;

/** What a write answered, as a retry gets it again: its status, the headers that say what it made, its body. */
export interface KeptAnswer {
  status: number;
  headers: Record<string, string>;
  /** Sealed by the Worker before it came here (it may hold a secret shown once). */
  sealedBody: string;
}

/** The row kept for one key id's Idempotency-Key. */
export interface RetryRecord {
  /** What the first request was: its method, path and body's digest. */
  request: string;
  startedAt: number;
  /** Absent while the first request runs. */
  answer?: KeptAnswer;
}

export type RetryDecision =
  | { kind: "run" }
  | { kind: "replay"; answer: KeptAnswer }
  | { kind: "reused" }
  | { kind: "in_flight"; retryAfterMs: number };

/** What a request with an Idempotency-Key does, given what is kept: run, replay, refuse, or wait. */
export function decideRetry(kept: RetryRecord | undefined, request: string, now: number): RetryDecision {
  if (!kept || now - kept.startedAt >= KEEP_MS) return { kind: "run" };
  if (kept.request !== request) return { kind: "reused" };
  if (kept.answer) return { kind: "replay", answer: kept.answer };
  const runningFor = now - kept.startedAt;
  if (runningFor >= RUNNING_MS) return { kind: "run" };
  return { kind: "in_flight", retryAfterMs: RUNNING_MS - runningFor };
}

/** What the object answers a request with an Idempotency-Key: a decision, and for one that runs, when it began. */
export type BeginAnswer =
  | Exclude<RetryDecision, { kind: "run" }>
  | { kind: "run"; startedAt: number }
  /** A key the object knows ended: nothing kept is looked at, nothing is kept. */
  | { kind: "bypass" };

/** The SQLite table of an account's kept answers, in its Durable Object. */
export class IdempotentAnswers {
  readonly #sql: SqlStorage;

  /** Makes its table where it is missing: on a new object. */
  constructor(sql: SqlStorage) {
    this.#sql = sql;
    this.#sql.exec(
      "CREATE TABLE IF NOT EXISTS idempotent_answers (key_id TEXT NOT NULL, idempotency_key TEXT NOT NULL, " +
        "request TEXT NOT NULL, started_at INTEGER NOT NULL, answer TEXT, PRIMARY KEY (key_id, idempotency_key))",
    );
    this.#sql.exec("CREATE INDEX IF NOT EXISTS idempotent_answers_age ON idempotent_answers (started_at)");
  }

  /** Decides and, to run, marks running in the same call, so of two retries at once one runs and one waits. */
  begin(keyId: string, idempotencyKey: string, request: string, now: number): BeginAnswer {
    const decision = decideRetry(this.#read(keyId, idempotencyKey), request, now);
    if (decision.kind === "run") {
      this.#sql.exec(
        "INSERT OR REPLACE INTO idempotent_answers (key_id, idempotency_key, request, started_at, answer) " +
          "VALUES (?, ?, ?, ?, NULL)",
        keyId,
        idempotencyKey,
        request,
        now,
      );
      this.#keepAtMost(MAX_KEPT);
      return { kind: "run", startedAt: now };
    }
    return decision;
  }

  /** Keeps the first request's answer, if that request still holds the key. */
  finish(keyId: string, idempotencyKey: string, request: string, startedAt: number, answer: KeptAnswer): void {
    this.#sql.exec(
      "UPDATE idempotent_answers SET answer = ? WHERE key_id = ? AND idempotency_key = ? AND request = ? " +
        "AND started_at = ? AND answer IS NULL",
      JSON.stringify(answer),
      keyId,
      idempotencyKey,
      request,
      startedAt,
    );
  }

  /** Lets the key go after an answer not to keep (5xx, 429): a retry runs. */
  abandon(keyId: string, idempotencyKey: string, request: string, startedAt: number): void {
    this.#sql.exec(
      "DELETE FROM idempotent_answers WHERE key_id = ? AND idempotency_key = ? AND request = ? AND started_at = ? " +
        "AND answer IS NULL",
      keyId,
      idempotencyKey,
      request,
      startedAt,
    );
  }

  /** Forgets what is past its day; the time the next one is, for the object's alarm (undefined: none left). */
  prune(now: number): number | undefined {
    this.#sql.exec("DELETE FROM idempotent_answers WHERE started_at <= ?", now - KEEP_MS);
    const [oldest] = this.#sql
      .exec<{ started_at: number }>("SELECT started_at FROM idempotent_answers ORDER BY started_at LIMIT 1")
      .toArray();
    return oldest === undefined ? undefined : oldest.started_at + KEEP_MS;
  }

  #read(keyId: string, idempotencyKey: string): RetryRecord | undefined {
    const [row] = this.#sql
      .exec<{ request: string; started_at: number; answer: string | null }>(
        "SELECT request, started_at, answer FROM idempotent_answers WHERE key_id = ? AND idempotency_key = ?",
        keyId,
        idempotencyKey,
      )
      .toArray();
    if (!row) return undefined;
    return {
      request: row.request,
      startedAt: row.started_at,
      ...(row.answer !== null && { answer: JSON.parse(row.answer) as KeptAnswer }),
    };
  }

  #keepAtMost(kept: number): void {
    this.#sql.exec(
      // A request still running keeps its row (dropping it would let its retry run it twice).
      "DELETE FROM idempotent_answers WHERE rowid IN (SELECT rowid FROM idempotent_answers ORDER BY started_at " +
        "DESC LIMIT -1 OFFSET ?) AND answer IS NOT NULL",
      kept,
    );
  }
}
