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

/**
 * How the caller that identification found is counted, handed to rateLimit()
 * by the app (keys/counted-callers.ts): the limiter knows accounts, not keys.
 */
export interface CountedCallers {
  accountOf(c: Context<AppEnv>): Budget;
  /**
   * The account's word on the key presented: a live key is the request's caller from now on; a key refused makes
   * it what it is, a request without a valid key, counted as one.
   */
  verified(c: Context<AppEnv>, key: KnownKey): void;
  /**
   * What names the request's caller before it is identified, cheaply (the
   * key as sent, or the address group of a request with no credential);
   * undefined when only identification can say (a cookie).
   */
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

/**
 * What the lease client may ask of one request: its account, the ban rule,
 * the account objects, the request's background work. One object a request,
 * not a copy of the account and a closure per need: the refusals this path
 * answers cost little more than writing them (docs/design/performance.md#what-the-floors-show).
 */
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
