/**
 * Cloudflare Access in front of the operators' side (docs/operations.md#cloudflare-access): its JWT in
 * `Cf-Access-Jwt-Assertion` is trusted once verified here (the team's key, this audience, this issuer, not expired).
 * The operator is the email Access signed in, or `service:<client id>`.
 */
import { createRemoteJWKSet, errors, jwtVerify, type JWTVerifyGetKey } from "jose";

export const ACCESS_ASSERTION_HEADER = "Cf-Access-Jwt-Assertion";

export interface AccessApplication {
  /** The team's domain, `<team>.cloudflareaccess.com`: the issuer, and where its signing keys are published. */
  teamDomain: string;
  /** The Access application's audience tag. */
  audience: string;
}

export type AccessVerdict = { ok: true; operator: string } | { ok: false; reason: string };

/**
 * How far the Worker's clock and Access's may disagree, seconds: a Worker a second behind would refuse a fresh `nbf`.
 */
export const ACCESS_CLOCK_TOLERANCE_S = 30;

/** The team's published keys for the isolate's life; jose refetches after 10 minutes, sooner for a new id. */
export class AccessKeys {
  readonly #sets = new Map<string, JWTVerifyGetKey>();

  of(teamDomain: string): JWTVerifyGetKey {
    let set = this.#sets.get(teamDomain);
    if (!set) {
      set = createRemoteJWKSet(new URL(`https://${teamDomain}/cdn-cgi/access/certs`));
      this.#sets.set(teamDomain, set);
    }
    return set;
  }

  clear(): void {
    this.#sets.clear();
  }
}

/** Verifies an Access assertion for `application`. A refusal says why; a failure to fetch the keys throws (503). */
export async function verifyAccessAssertion(
  assertion: string | undefined,
  application: AccessApplication,
  keys: AccessKeys,
): Promise<AccessVerdict> {
  if (!assertion)
    return {
      ok: false,
      reason: `no ${ACCESS_ASSERTION_HEADER} header: reach this through the Access application that protects it`,
    };
  try {
    const { payload } = await jwtVerify(assertion, keys.of(application.teamDomain), {
      issuer: `https://${application.teamDomain}`,
      audience: application.audience,
      algorithms: ["RS256"],
      clockTolerance: ACCESS_CLOCK_TOLERANCE_S,
    });
    if (typeof payload.email === "string" && payload.email !== "") return { ok: true, operator: payload.email };
    if (typeof payload.common_name === "string" && payload.common_name !== "")
      return { ok: true, operator: `service:${payload.common_name}` };
    return { ok: false, reason: "the Access token names no email and no service token" };
  } catch (error) {
    const reason = refusalOf(error);
    if (reason === undefined) throw error;
    return { ok: false, reason };
  }
}

/** Why a token is refused; undefined for errors that are not the token's. */
function refusalOf(error: unknown): string | undefined {
  if (error instanceof errors.JWTExpired) return "the Access token has expired: sign in again";
  if (error instanceof errors.JWTClaimValidationFailed) {
    if (error.claim === "aud") return "the Access token is for another application (its audience is not this one's)";
    if (error.claim === "iss") return "the Access token was issued by another team";
    return `the Access token's ${error.claim} claim is not valid`;
  }
  if (error instanceof errors.JWKSNoMatchingKey) return "the Access token is signed by a key the team does not publish";
  if (error instanceof errors.JWSSignatureVerificationFailed) return "the Access token's signature does not verify";
  // The team's keys not fetched or not readable is Access's fault, not the token's: anything else jose refuses is.
  if (error instanceof errors.JWKSTimeout || error instanceof errors.JWKSInvalid) return undefined;
  if (error instanceof errors.JOSEError) return "the Access token is not a valid signed token";
  return undefined;
}
