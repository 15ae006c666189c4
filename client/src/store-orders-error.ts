/**
 * Every failure the client reports: the service's Error shape (code, message,
 * status) and the request id to quote when reporting it. Failures that never
 * got an answer in that shape have their own codes: `network_error` (status
 * 0: no response after every attempt) and `unexpected_response` (a body that
 * is not the documented shape, such as a list cut off mid-way).
 */
export class StoreOrdersError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number,
    readonly requestId: string | undefined,
    options?: { cause?: unknown },
  ) {
    super(message, options);
    this.name = "StoreOrdersError";
  }
}

/** The error a failed response stands for, from its body when that is the Error shape. */
export async function errorOf(response: Response): Promise<StoreOrdersError> {
  const requestId = response.headers.get("X-Request-Id") ?? undefined;
  let body: unknown;
  try {
    body = await response.json();
  } catch {
    body = undefined;
  }
  const shape = body as { code?: unknown; message?: unknown; status?: unknown } | undefined;
  if (typeof shape?.code === "string" && typeof shape.message === "string") {
    return new StoreOrdersError(shape.code, shape.message, response.status, requestId);
  }
  return new StoreOrdersError(
    "unexpected_response",
    `HTTP ${response.status} without an Error body`,
    response.status,
    requestId,
  );
}
