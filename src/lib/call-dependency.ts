/**
 * A platform dependency that failed twice, or did not answer in time: the one
 * error handler answers it with 503 `service_unavailable` and `Retry-After`,
 * so the client backs off instead of seeing a 500.
 */
export class DependencyUnavailable extends Error {
  constructor(
    readonly dependency: string,
    cause: unknown,
  ) {
    super(`${dependency} is unavailable`, { cause });
    this.name = "DependencyUnavailable";
  }
}

/**
 * Calls a platform dependency (D1, KV, the limiter) and retries once: a single
 * transient failure should not reach the client, a persistent one becomes
 * DependencyUnavailable; an error `refusal` matches is thrown as it is. With `timeoutMs`, an
 * attempt that has not answered by then counts as failed, so a stuck
 * dependency costs the client a bounded wait rather than a hung request.
 */
export async function callDependency<T>(
  name: string,
  call: () => Promise<T>,
  options: { timeoutMs?: number; refusal?: (error: unknown) => boolean } = {},
): Promise<T> {
  const attempt = () => (options.timeoutMs === undefined ? call() : withTimeout(call(), options.timeoutMs));
  try {
    return await attempt();
  } catch (error) {
    // A refusal (the dependency answered, and said no) is the caller's to answer: trying again would only repeat it.
    if (options.refusal?.(error)) throw error;
    try {
      return await attempt();
    } catch (cause) {
      throw new DependencyUnavailable(name, cause);
    }
  }
}

/** The promise's outcome, or a rejection once `ms` pass without one. */
export async function withTimeout<T>(promise: Promise<T>, ms: number): Promise<T> {
  let cancel = () => {};
  const timeout = new Promise<never>((_, reject) => {
    const timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
    cancel = () => clearTimeout(timer);
  });
  try {
    return await Promise.race([promise, timeout]);
  } finally {
    cancel();
  }
}
