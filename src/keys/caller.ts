/**
 * What a caller is (docs/api.md#authentication): a key presented, a key its
 * account verified, or an address group without a valid key and why it is
 * refused where a key is needed. identify-caller.ts says which one a request is.
 */
import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import type { ErrorCode } from "../framework/api-error";
import type { ApiKeyRecord, KeyStanding } from "../account/key-record";
import type { Limits } from "../account/plans";

export const CHALLENGE = 'Bearer realm="store-orders"';

/**
 * Headers that stand for someone other than a key's holder (GitHub's secret scanning signature, Cloudflare
 * Access's assertion for an operator): a request that carries one is never known by its address alone, so a
 * refusal of the address is never repeated to it before identification.
 */
export const OTHER_CREDENTIAL_HEADERS = ["Github-Public-Key-Signature", "Cf-Access-Jwt-Assertion"] as const;

/** A console session (console/): which one, until when it lasts, and the header that clears its cookie. */
export interface CallerSession {
  id: string;
  expiresAt: string;
  clearCookie: string;
}

/**
 * Why a caller without a valid key is refused where a key is needed,
 * described and built into an ApiError only when requireApiKey() throws it:
 * most requests without a key are counted and answered 429 before that, and
 * building the Error was a tenth of such a 429's cost
 * (docs/design/performance.md#what-the-floors-show).
 */
export interface Rejection {
  code: ErrorCode;
  message: string;
  headers?: Record<string, string>;
}

/**
 * Who is calling: a key found, not yet verified (`presented`: its account says whether it stands); a key its
 * account verified, as the account has it; or an address group (lib/client-address.ts) that did not present a
 * valid key, and why.
 */
export type Caller =
  | { kind: "presented"; keyId: string; account: string; address: string; session?: CallerSession }
  | { kind: "key"; key: ApiKeyRecord; address: string; session?: CallerSession }
  | {
      kind: "anonymous";
      address: string;
      rejection: Rejection;
      /**
       * An operator identified before the count (Access, a token, a console session this service sealed): counted on
       * their own, not by the address.
       */
      operator?: string;
      /**
       * A partner whose signature verified (GitHub's secret scanning): counted on a budget of its own, never its
       * address's, with its limits.
       */
      partner?: { name: string; limits: Limits };
    };

/**
 * Who a request is when it carries something other than an API key that
 * stands for a key (the console's session cookie, where no Authorization
 * header is sent: a key in the header wins) or for someone else (an
 * operator, GitHub's signature): undefined when it carries nothing of the
 * kind, and identification goes on with the Authorization header.
 */
export type OtherCredential = (c: Context<AppEnv>, address: string) => Promise<Caller | undefined>;

declare module "hono" {
  interface ContextVariableMap {
    /** Set by identifyCaller(), and again by rateLimit() once the key's account has said whether it stands. */
    caller: Caller;
  }
}

/**
 * A caller whose key is not valid (malformed, unknown, revoked): limited by its address, answered 401 where a key is
 * needed.
 */
export function invalidCaller(address: string): Caller {
  return { kind: "anonymous", address, rejection: INVALID_KEY };
}

/**
 * A caller whose key its account refused: malformed, unknown and revoked keys get the same answer (nothing here
 * helps someone guessing keys); an expired key says so, so its owner asks for a new one rather than check for a
 * typo. A console session learns why it ended.
 */
export function refusedKeyCaller(
  caller: { address: string; session?: CallerSession },
  standing: Exclude<KeyStanding, "live">,
  expiresAt?: string,
): Caller {
  if (caller.session)
    return sessionEndedCaller(caller.address, "its key was revoked or expired", caller.session.clearCookie);
  if (standing === "expired")
    return {
      kind: "anonymous",
      address: caller.address,
      rejection: invalidKey(`The API key expired${expiresAt ? ` at ${expiresAt}` : ""}. Ask for a new one.`),
    };
  return invalidCaller(caller.address);
}

/** A caller whose console session has ended (console/): 401 session_ended, saying why, its cookie cleared. */
export function sessionEndedCaller(address: string, why: string, clearCookie: string): Caller {
  return {
    kind: "anonymous",
    address,
    rejection: {
      code: "session_ended",
      message: `Your console session has ended (${why}). Sign in again.`,
      headers: { "WWW-Authenticate": CHALLENGE, "Set-Cookie": clearCookie },
    },
  };
}

export const MISSING_KEY: Rejection = {
  code: "missing_api_key",
  message: 'Send your API key in the header "Authorization: Bearer <key>".',
  headers: { "WWW-Authenticate": CHALLENGE },
};

/** 401 invalid_api_key with the RFC 6750 challenge. */
function invalidKey(message: string): Rejection {
  return { code: "invalid_api_key", message, headers: { "WWW-Authenticate": `${CHALLENGE}, error="invalid_token"` } };
}

const INVALID_KEY = invalidKey("The API key is not valid. Check it, or ask for a new one.");
