/** How a request is admitted: the budget it is counted against, and the one answer to what it may do (accessOf). */
import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import { logLine } from "../lib/log";
import type { AdmitContext } from "./lease-client";
import type { KnownKey } from "./lease-book";
import type { Limits } from "./plans";
import type { Verdict } from "./protocol";
import type { KeyNeed } from "../framework/operations/scopes";

/** The one answer to "may this caller do this now" (docs/design/rate-limits.md#key-state), as Unkey's `verifyKey`. */
export type Access =
  | "allowed"
  | "limited"
  | "banned"
  | "not_found"
  | "revoked"
  | "expired"
  | "insufficient_scope"
  | "acts_only_on_itself";

/** An access the key's need refuses: the caller's credential says how (401 or 403). */
export type KeyRefused = Exclude<Access, "allowed" | "limited" | "banned">;

/** The access a request has: a refusal by the limits first, as every caller is counted; then the key's. */
export function accessOf(outcome: Verdict["outcome"], key: KnownKey | undefined, need: KeyNeed | undefined): Access {
  if (outcome !== "admitted") return outcome;
  if (!need) return "allowed";
  if (!key) return "not_found";
  if (key.standing !== "live") return key.standing;
  const record = key.record!;
  if (need.scopes.some((scope) => !record.scopes.includes(scope))) return "insufficient_scope";
  return need.beyondItself !== undefined && record.rotatedTo !== undefined ? "acts_only_on_itself" : "allowed";
}

/** What a request is counted against: a key's account (which decides the key too), or a caller without one. */
export interface Budget {
  name: string;
  /** The limits of a caller without an account (an address, an operator, a partner). */
  limits?: Limits;
  /** The key presented, when an account counts the request: the account answers its standing. */
  keyId?: string;
  /** Its own ban rule, where it is not the service's (a partner is never banned). */
  ban?: AdmitContext["ban"];
}

/** How the caller identification found is counted, handed in by the app: the limiter knows accounts, not keys. */
export interface CountedCallers {
  accountOf(c: Context<AppEnv>): Budget;
  /** The account's word on the key presented: live, it is the caller; refused, the request counts as without a key. */
  verified(c: Context<AppEnv>, key: KnownKey): void;
  /** How a refusal of the key's is answered (401 or 403), as the caller's credential says. */
  refusal(c: Context<AppEnv>, access: KeyRefused, need: KeyNeed): Error;
  /** What names the caller cheaply before identification (the key as sent, or the address); undefined for a cookie. */
  credentialOf(c: Context<AppEnv>): string | undefined;
  /** How the identified caller is known again by its credential; undefined for one identified anew every time. */
  recognise(c: Context<AppEnv>): Recognition | undefined;
}

/** A caller known by its credential (rate-limit.ts, replayRefusal), for as long as `holds` says. */
export interface Recognition {
  credential: string;
  /** True while the credential still names this caller as identified. */
  holds(now: number): boolean;
  /** Sets the caller on a request named by the credential, as identification would. */
  restore(c: Context<AppEnv>): void;
}

/** What the lease client may ask of one request: one object, no closures, as refusals here must be cheap. */
export class RequestAdmission implements AdmitContext {
  readonly limits: Limits | undefined;
  readonly keyId: string | undefined;
  readonly ban: AdmitContext["ban"];
  readonly #c: Context<AppEnv>;

  constructor(c: Context<AppEnv>, budget: Budget, ban: AdmitContext["ban"] = budget.ban ?? c.get("config").ban) {
    this.#c = c;
    this.limits = budget.limits;
    this.keyId = budget.keyId;
    this.ban = ban;
  }

  limiter(name: string) {
    return this.#c.env.ACCOUNTS.getByName(name);
  }

  background(work: Promise<unknown>): void {
    this.#c.executionCtx.waitUntil(work);
  }

  onBackgroundError(error: unknown): void {
    logLine("error", this.#c.get("requestId"), "limiter call in the background failed", { error: String(error) });
  }
}
