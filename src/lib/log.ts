/**
 * A log line besides the request's own (framework/middleware/request-log.ts): something
 * an operator should see that the response does not show, such as work in the
 * background that failed or data that was left out. JSON, with the request id,
 * like every line (docs/operations.md#logs).
 */
export function logLine(
  level: "warn" | "error",
  requestId: string,
  message: string,
  fields: Record<string, unknown> = {},
): void {
  (level === "error" ? console.error : console.warn)(JSON.stringify({ level, requestId, message, ...fields }));
}
