/**
 * What a caller is (docs/api.md#authentication): a key presented, a key its account verified, or an address group
 * without a valid key and why it is refused. identify-caller.ts says which one a request is.
 */
import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import type { ErrorCode } from "../framework/api-error";
import type { ApiKeyRecord, KeyStanding } from "../account/key-record";
import type { Limits } from "../account/plans";

export const CHALLENGE = 'Bearer realm="store-orders"';

/** Headers standing for someone other than a key's holder: never answered an address's refusal unidentified. */
export const OTHER_CREDENTIAL_HEADERS = ["Github-Public-Key-Signature", "Cf-Access-Jwt-Assertion"] as const;

/** A console session (console/): which one, until when it lasts, and the header that clears its cookie. */
export interface CallerSession {
  id: string;
  expiresAt: string;
  clearCookie: string;
}

/**
 * Why a caller without a valid key is refused, built into an ApiError only when the limiter's step refuses it: most
 * such requests get their 429 first, and building the Error cost a tenth of it.
 */
export interface Rejection {
  code: ErrorCode;
  message: string;
  headers?: Record<string, string>;
}

/** Who is calling: a key presented, a key verified, or an address group without a valid key, and why. */
export type Caller =
  | { kind: "presented"; keyId: string; account: string; address: string; session?: CallerSession }
  | { kind: "key"; key: ApiKeyRecord; address: string; session?: CallerSession }
  | {
      kind: "anonymous";
      address: string;
      rejection: Rejection;
      /** An operator identified before the count: counted on their own, not by the address. */
      operator?: string;
      /** A partner whose signature verified: counted on a budget of its own, with its limits. */
      partner?: { name: string; limits: Limits };
    };

/** Who carries a credential other than a key in the header (cookie, operator, GitHub); undefined: none. */
export type OtherCredential = (c: Context<AppEnv>, address: string) => Promise<Caller | undefined>;

declare module "hono" {
  interface ContextVariableMap {
    /** Set by identifyCaller(), and again by rateLimit() once the key's account has said whether it stands. */
    caller: Caller;
  }
}

/** The calling key, in an operation that needs one: the limiter's step let no other caller reach it. */
export function keyOfCaller(c: Context<AppEnv>): ApiKeyRecord {
  const caller = c.get("caller");
  if (caller.kind !== "key") throw new Error("an operation that needs a key ran without one: it asks for no scope");
  return caller.key;
}

/** A caller whose key is not valid: limited by its address, answered 401 where a key is needed. */
export function invalidCaller(address: string): Caller {
  return { kind: "anonymous", address, rejection: INVALID_KEY };
}

/**
 * A caller whose key its account refused: malformed, unknown and revoked keys get one answer (nothing to help a
 * guesser); an expired key says so. A console session learns why it ended.
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
