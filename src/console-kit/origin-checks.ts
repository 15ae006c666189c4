/**
 * The consoles' defence against other sites (docs/api.md#the-console): a
 * write that rides on a session cookie must come from this origin, and a
 * sign-in never from another site (login CSRF).
 */
import { ApiError } from "../framework/api-error";

/**
 * Whether a request that would change something comes from this origin: a
 * browser sends `Origin` with every such request, so a write riding on the
 * session cookie without one, or from another origin, is refused. A request
 * that brings its own key (sign-in) may come without one, as API clients do,
 * but never from another site.
 */
export function fromThisOrigin(request: Request, originRequired: boolean): boolean {
  const origin = request.headers.get("Origin");
  if (origin === null) return !originRequired && request.headers.get("Sec-Fetch-Site") !== "cross-site";
  return origin === new URL(request.url).origin;
}

/** A sign-in must not come from another site (login CSRF): API clients, which send no Origin, may sign in. */
export function refuseSignInFromAnotherSite(request: Request): void {
  if (!fromThisOrigin(request, false))
    throw new ApiError("cross_site_request", "Sign in from this service's own console, not from another site.");
}
