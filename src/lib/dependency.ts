import { ApiError } from "../errors";

/**
 * Calls a platform dependency (D1, KV, the limiter) and retries once: a single
 * transient failure should not reach the client, a persistent one becomes 503
 * so the client backs off instead of seeing a 500.
 */
export async function callDependency<T>(name: string, call: () => Promise<T>): Promise<T> {
  try {
    return await call();
  } catch {
    try {
      return await call();
    } catch (cause) {
      throw new ApiError(
        "service_unavailable",
        `The service is temporarily unavailable (${name}). Retry shortly.`,
        { "Retry-After": "1" },
        cause,
      );
    }
  }
}
