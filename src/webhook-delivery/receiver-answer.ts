/** How much of a receiver's answer is kept: enough to see why it refused, never a whole page. */
const ANSWER_SHOWN = 256;

/**
 * The start of a receiver's answer, ANSWER_SHOWN characters at most, since it may be anything of any length; null when
 * the body stalled past the timeout.
 */
async function answerStart(answer: Response): Promise<string | null> {
  const reader = answer.body?.getReader();
  if (!reader) return "";
  try {
    const { value } = await reader.read();
    return new TextDecoder().decode(value ?? new Uint8Array()).slice(0, ANSWER_SHOWN);
  } catch {
    return null;
  } finally {
    await reader.cancel().catch(() => {});
  }
}

/** What a receiver made of one POST. */
export interface ReceiverAnswer {
  /** Its HTTP status; null when it gave none. */
  status: number | null;
  retryAfter: string | null;
  /** The start of its answer (answerStart). */
  response: string | null;
  /** What went wrong when no answer came. */
  error: string | null;
  timedOut: boolean;
  /** From sending to its status and headers, or to the failure. */
  durationMs: number;
}

/** POSTs a signed event, following no redirect, and reads the answer: an attempt's or a test event's. */
export async function postToReceiver(
  fetch: typeof globalThis.fetch,
  url: string,
  request: { headers: Record<string, string>; body: string },
  timeoutMs: number,
): Promise<ReceiverAnswer> {
  const sent = Date.now();
  try {
    const answer = await fetch(url, {
      method: "POST",
      ...request,
      redirect: "manual",
      signal: AbortSignal.timeout(timeoutMs),
    });
    const durationMs = Date.now() - sent;
    return {
      status: answer.status,
      retryAfter: answer.headers.get("Retry-After"),
      response: await answerStart(answer),
      error: null,
      timedOut: false,
      durationMs,
    };
  } catch (cause) {
    const timedOut = cause instanceof Error && cause.name === "TimeoutError";
    return {
      status: null,
      retryAfter: null,
      response: null,
      error: timedOut ? `no answer within ${timeoutMs / 1000} s` : "could not connect",
      timedOut,
      durationMs: Date.now() - sent,
    };
  }
}
