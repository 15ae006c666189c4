import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import { logLine } from "../lib/log";
import type { AdmitContext } from "./lease-client";
import type { KnownKey } from "./lease-book";
import type { Limits } from "./plans";

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
  /** What names the caller cheaply before identification (the key as sent, or the address); undefined for a cookie. */
  credentialOf(c: Context<AppEnv>): string | undefined;
  /** How the identified caller is known again by its credential; undefined for one identified anew every time. */
  recognise(c: Context<AppEnv>): Recognition | undefined;
}

/** A caller known by its credential (refusal-replay.ts), for as long as `holds` says. */
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
