/** A platform dependency that failed twice or timed out: answered 503 with `Retry-After`, so the client backs off. */
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
 * Calls a platform dependency and retries once, so one transient failure never reaches the client; an error `refusal`
 * matches is thrown as it is. With `timeoutMs`, a stuck dependency costs a bounded wait.
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
