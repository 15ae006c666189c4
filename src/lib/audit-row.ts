/** Thrown by an operation that failed before it changed anything: its audit row is taken back. */
export class OperationNotTaken extends Error {
  /** What the client is answered instead, when the operation was refused (keys/key-refusal.ts). */
  readonly answer: Error | undefined;

  constructor(message: string, options?: ErrorOptions & { answer?: Error }) {
    super(message, options);
    this.name = "OperationNotTaken";
    this.answer = options?.answer;
  }
}

/** What to do with an operation's rows when it fails: take them back, or keep them marked 'unknown'. */
export interface AuditRowsOnFailure<Rows> {
  remove(rows: Rows): Promise<unknown>;
  markUnknown(rows: Rows): Promise<unknown>;
}

/**
 * Runs an operation with its audit row written first: taken back on OperationNotTaken, kept 'unknown' on any other
 * failure (it may have taken effect), so the audit never misses an operation that happened. The operation gets its rows
 * to add what it learns.
 */
export async function withAuditRow<Rows, T>(
  insert: () => Promise<Rows>,
  onFailure: AuditRowsOnFailure<Rows>,
  operation: (rows: Rows) => Promise<T>,
): Promise<T> {
  const rows = await insert();
  try {
    return await operation(rows);
  } catch (error) {
    const notTaken = error instanceof OperationNotTaken;
    try {
      await (notTaken ? onFailure.remove(rows) : onFailure.markUnknown(rows));
    } catch (settling) {
      throw new AggregateError(
        [error, settling],
        `the operation failed and its audit rows ${JSON.stringify(rows)} could not be ` +
          `${notTaken ? "taken back" : "marked unknown"}`,
      );
    }
    throw error;
  }
}
