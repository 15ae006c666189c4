/** A log line beside the request's own, for what the response does not show (docs/operations.md#logs). */
export function logLine(
  level: "warn" | "error",
  requestId: string,
  message: string,
  fields: Record<string, unknown> = {},
): void {
  (level === "error" ? console.error : console.warn)(JSON.stringify({ level, requestId, message, ...fields }));
}
