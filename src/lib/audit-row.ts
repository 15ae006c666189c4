/**
 * An operation with its audit row, written first: a row for an operation that
 * never happened is taken back, and one that may have happened stays, marked
 * unknown. Shared by the key audit and the webhook endpoints' audit.
 */
/**
 * Thrown by an operation that failed before it changed anything (nothing was
 * sent, or the other side refused it unread): its audit row is taken back.
 */
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
 * Runs an operation with its audit row: the row first, then the operation.
 * When the operation fails before changing anything (OperationNotTaken), the
 * row is taken back; any other failure may have come after it took effect
 * (a write whose answer was lost), so the row stays, marked 'unknown'. The
 * audit never misses an operation that happened (docs/operations.md#operator-api).
 * The operation is handed its rows, to add to them what it learns as it goes.
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
