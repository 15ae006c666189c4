import { callDependency } from "../lib/call-dependency";
import { waitsOutside } from "../lib/waits-outside";
import {
  abandonAsk,
  absorbAnswer,
  absorbSettled,
  decideLocally,
  expireLeases,
  leaseRequest,
  localRefusal,
  needsRenewal,
  refusalBatch,
  newLeaseBook,
  noteArrival,
  noteLocalRefusal,
  settleFailed,
  settleRequest,
  type Admission,
  type Asker,
  type LeaseBook,
} from "./lease-book";
import type { LeaseAnswer, LeaseRequest, SettleAnswer, SettleRequest, Verdict } from "./protocol";

/** An unanswered ask is retried once after this, with the same id, so its grant is counted once. */
export const LIMITER_TIMEOUT_MS = 1_000;
/** Refusals answered here reach the object at most this long after the first of them, in one call. */
export const REFUSAL_FLUSH_MS = 1_000;
/** Callers an isolate keeps books for; the least recently seen is dropped beyond this (its unspent lease with it). */
const MAX_CALLERS = 10_000;

interface LimiterStub {
  acquire(request: LeaseRequest): Promise<LeaseAnswer>;
  settle(request: SettleRequest): Promise<SettleAnswer>;
}

export interface AdmitContext extends Asker {
  limiter(name: string): LimiterStub;
  /** Work that may finish after the response (waitUntil). */
  background(work: Promise<unknown>): void;
  /** Called as a method (it may be one of a class): never handed around unbound. */
  onBackgroundError(error: unknown): void;
}

export type SettleContext = Pick<AdmitContext, "ban" | "limiter" | "onBackgroundError">;

type AskOutcome = { ok: true } | { ok: false; error: unknown; speculative: boolean };

type Lease = LeaseBook["leases"][number];

interface Caller {
  book: LeaseBook;
  /** Wakes the timer of a lease that has been spent before it expired: it has nothing to hand back. */
  spent: Map<Lease, () => void>;
  /** The lease request in flight: concurrent requests wait for it instead of asking too. */
  asking?: Promise<AskOutcome>;
  waiting: number;
  /** A send of the refusals answered here is scheduled. */
  flushing?: boolean;
}

/**
 * The isolate's side of leases (docs/design/rate-limits.md#leases): decides from its books when it can, asks the
 * account's object when it must (one ask at a time per caller), renews steady callers' leases, and hands back what
 * expired unspent.
 */
export class LeaseClient {
  readonly #callers = new Map<string, Caller>();

  /** Hands back this isolate's leases of the caller, so the usage history counts what was served. */
  async handBack(name: string, context: SettleContext): Promise<void> {
    const caller = this.#callers.get(name);
    if (!caller) return;
    // A renewal under way is waited for: what it grants is handed back too, not left reserved in the history being
    // read.
    await caller.asking;
    expireLeases(caller.book, Date.now());
    await this.#settle(name, caller, context, Date.now());
  }

  /** Whether this isolate knows the caller banned now (its object said so within a lease): nothing is counted. */
  knowsBanned(name: string, now: number): boolean {
    const book = this.#callers.get(name)?.book;
    return book !== undefined && book.banEnds > now / 1000 && now < book.banKnownUntil;
  }

  /** Whether this isolate knows the caller refused now, banned or limited, as admit() would answer it unasked. */
  knowsRefused(name: string, now: number): boolean {
    const book = this.#callers.get(name)?.book;
    // An expired lease goes back first and may make room (as in refuseKnown); a limit about to ban still refuses.
    if (!book || book.leases.some((lease) => lease.expiresAt <= now)) return false;
    return localRefusal(book, { threshold: Number.POSITIVE_INFINITY, seconds: 0 }, now) !== undefined;
  }

  /** Drops the account's word on a key: the key's next request here asks the account. */
  forgetKey(name: string, keyId: string): void {
    this.#callers.get(name)?.book.keys.delete(keyId);
  }

  /** Forgets every caller, as a new isolate; a lease out still goes back when it expires. */
  clear(): void {
    this.#callers.clear();
  }

  async admit(name: string, context: AdmitContext): Promise<Admission> {
    const caller = this.#caller(name);
    const arrived = Date.now();
    noteArrival(caller.book, arrived);
    // Normally a lease's own timer hands back what it left; this catches any it missed.
    if (caller.book.leases.some((lease) => lease.expiresAt <= arrived))
      context.background(this.#settle(name, caller, context, arrived));
    for (;;) {
      const now = Date.now();
      const verdict = decideLocally(caller.book, context.ban, now, context.keyId);
      if (verdict) {
        this.#afterLocal(name, caller, verdict, context, now);
        return verdict;
      }
      if (!caller.asking) return (await this.#ask(name, caller, context, false))!;
      caller.waiting += 1;
      const outcome = await caller.asking;
      caller.waiting -= 1;
      // A failed renewal is no answer to this request: it asks itself.
      if (!outcome.ok && !outcome.speculative) throw outcome.error;
    }
  }

  /** A refusal answered without the object when `accept` takes it, counted as admit() would; else undefined. */
  refuseKnown(name: string, context: AdmitContext, accept: (refusal: Verdict) => boolean): Verdict | undefined {
    const caller = this.#callers.get(name);
    const now = Date.now();
    // An expired lease goes back first and may make room, and a key whose word is stale is asked about: admit()
    // decides.
    if (!caller || caller.book.leases.some((lease) => lease.expiresAt <= now)) return undefined;
    if (context.keyId !== undefined && !((caller.book.keys.get(context.keyId)?.known.until ?? 0) > now))
      return undefined;
    const refusal = localRefusal(caller.book, context.ban, now);
    if (!refusal || !accept(refusal)) return undefined;
    this.#caller(name);
    noteArrival(caller.book, now);
    noteLocalRefusal(caller.book, refusal, now);
    this.#afterLocal(name, caller, refusal, context, now);
    return refusal;
  }

  #afterLocal(name: string, caller: Caller, verdict: Verdict, context: AdmitContext, now: number): void {
    if (verdict.outcome === "admitted") {
      for (const [lease, wake] of caller.spent) if (lease.count === 0) wake();
      if (!caller.asking && needsRenewal(caller.book, now)) {
        context.background(
          this.#ask(name, caller, context, true).catch((error: unknown) => context.onBackgroundError(error)),
        );
      }
    }
    if (verdict.outcome === "limited" && caller.book.pending.count >= refusalBatch(context.ban)) {
      context.background(this.#settle(name, caller, context, now));
    } else if (verdict.outcome !== "admitted" && !caller.flushing) {
      caller.flushing = true;
      context.background(
        waitsOutside(
          new Promise((resolve) => setTimeout(resolve, REFUSAL_FLUSH_MS)).then(() => {
            caller.flushing = false;
            return this.#settle(name, caller, context, Date.now());
          }),
        ),
      );
    }
  }

  /** Asks the object for a lease; a speculative ask is a renewal no request waits on. */
  async #ask(
    name: string,
    caller: Caller,
    context: AdmitContext,
    speculative: boolean,
  ): Promise<Admission | undefined> {
    const { book } = caller;
    const sentAt = Date.now();
    const request: LeaseRequest = leaseRequest(book, context, caller.waiting, sentAt, speculative, crypto.randomUUID());
    let settled!: (outcome: AskOutcome) => void;
    caller.asking = new Promise((resolve) => (settled = resolve));
    try {
      const answer: LeaseAnswer = await callDependency("rate limiter", () => context.limiter(name).acquire(request), {
        timeoutMs: LIMITER_TIMEOUT_MS,
      });
      const leases = book.leases.length;
      const verdict = absorbAnswer(book, answer, Date.now(), !speculative, request, sentAt);
      if (book.leases.length > leases)
        context.background(waitsOutside(this.#returnWhenExpired(name, caller, context, book.leases.at(-1)!)));
      settled({ ok: true });
      return verdict;
    } catch (error) {
      abandonAsk(book, request);
      settled({ ok: false, error, speculative });
      throw error;
    } finally {
      caller.asking = undefined;
    }
  }

  /**
   * Waits until the lease is spent or expires; what it left unspent goes back, for other isolates in the same window.
   */
  async #returnWhenExpired(name: string, caller: Caller, context: AdmitContext, lease: Lease): Promise<void> {
    await new Promise<void>((resolve) => {
      const timer = setTimeout(resolve, Math.max(0, lease.expiresAt - Date.now()));
      caller.spent.set(lease, () => {
        clearTimeout(timer);
        resolve();
      });
    });
    caller.spent.delete(lease);
    if (lease.count > 0) await this.#settle(name, caller, context, Date.now());
  }

  /** Settles in one attempt: applied twice it could over-admit, so a failed one is lost (under-admits). */
  async #settle(name: string, caller: Caller, context: SettleContext, now: number): Promise<void> {
    const request = settleRequest(caller.book, context.ban, now, crypto.randomUUID());
    if (!request) return;
    try {
      absorbSettled(caller.book, await context.limiter(name).settle(request), request, Date.now());
    } catch (error) {
      settleFailed(caller.book, request);
      context.onBackgroundError(error);
    }
  }

  #caller(name: string): Caller {
    let caller = this.#callers.get(name);
    if (caller) {
      // Map keeps insertion order: re-inserting makes the first entry the least recently seen.
      this.#callers.delete(name);
    } else {
      caller = { book: newLeaseBook(), spent: new Map(), waiting: 0 };
      if (this.#callers.size >= MAX_CALLERS) this.#callers.delete(this.#callers.keys().next().value!);
    }
    this.#callers.set(name, caller);
    return caller;
  }
}
