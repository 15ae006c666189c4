/** How much of a receiver's answer is kept: enough to see why it refused, never a whole page. */
export const ANSWER_SHOWN = 256;

/**
 * The start of a receiver's answer (its first chunk, at most ANSWER_SHOWN
 * characters), and no more of it: a receiver may answer with anything, of any
 * length. Null when the body cannot be read (it stalled past the request's
 * timeout): the status was still answered.
 */
export async function answerStart(answer: Response): Promise<string | null> {
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
