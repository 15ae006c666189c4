/** The consoles' defence against other sites: cookie writes from this origin only, no login CSRF. */
import { ApiError } from "../framework/api-error";

/**
 * Whether a changing request comes from this origin: browsers always send `Origin`, so a cookie's write without one is
 * refused; a request with its own key may lack one, as API clients do.
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
