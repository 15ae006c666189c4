import { DurableObject } from "cloudflare:workers";
import type { Limits } from "../keys/api-key-record";
import { acquire, expiresAt, revokeKey, setLimits, settle, unban, usageOf, type LimiterState, type Usage } from "./policy";
import type { LeaseAnswer, LeaseRequest, SettleAnswer, SettleRequest } from "./protocol";

const STATE = "state";

/**
 * One object per budget (an API key and the keys rotated from it, or an
 * address group, for callers without one): the counter of record. It grants
 * leases of admissions that worker isolates spend on their own (docs/design/rate-limits.md#leases). Each method reads, decides and writes with no await in between,
 * so concurrent calls are decided one after another and never over-grant.
 * State lives in the object's SQLite storage, written before the answer
 * leaves, so a grant survives eviction and restarts; a copy in memory saves
 * the read on every call but the first of each instance.
 */
export class RateLimiter extends DurableObject<Env> {
  #state: LimiterState | undefined;

  acquire(request: LeaseRequest): LeaseAnswer {
    const previous = this.#load();
    const { state, verdict } = acquire(previous, request, Date.now());
    this.#save(previous, state);
    return verdict;
  }

  settle(request: SettleRequest): SettleAnswer {
    const previous = this.#load();
    const state = settle(previous, request.unspent, request.refusals, request.ban, Date.now(), request.abandoned);
    this.#save(previous, state);
    return { refusedInARow: state.refusedInARow, banEnds: state.bannedUntil };
  }

  /** The operator API's view of this budget. */
  usage(): Usage {
    return usageOf(this.#load(), Date.now());
  }

  /** The operator API's unban: the ban ends now, and isolates learn it at their next call (within a lease's length). */
  unban(): Usage {
    return this.#change((previous, now) => unban(previous, now));
  }

  /**
   * The operator API's limits: the budget's from every isolate's next call on
   * (within a lease's length). `setAt` is the stamp the key records carry, so
   * a record read before the update can never bring the old limits back.
   */
  updateLimits(limits: Limits, setAt?: number): Usage {
    return this.#change((previous, now) => setLimits(previous, limits, setAt ?? now, now));
  }

  /** The operator API's revocation: isolates refuse the key from their next call on (within a lease's length). */
  revoke(keyId: string): Usage {
    return this.#change((previous, now) => revokeKey(previous, keyId, now));
  }

  #change(change: (previous: LimiterState | undefined, now: number) => LimiterState): Usage {
    const previous = this.#load();
    this.#save(previous, change(previous, Date.now()));
    return this.usage();
  }

  #load(): LimiterState | undefined {
    // This instance is the only writer, so what it last wrote is what storage holds.
    return this.#state ?? this.ctx.storage.kv.get<LimiterState>(STATE);
  }

  #save(previous: LimiterState | undefined, state: LimiterState): void {
    this.ctx.storage.kv.put(STATE, state);
    this.#state = state;
    if (!previous || expiresAt(previous) !== expiresAt(state)) {
      void this.ctx.storage.setAlarm(expiresAt(state) * 1000);
    }
  }

  /** Forgets the budget once nothing stored can affect a decision any more (revocations and learned limits included). */
  async alarm(): Promise<void> {
    const state = this.ctx.storage.kv.get<LimiterState>(STATE);
    if (state && expiresAt(state) * 1000 > Date.now()) {
      await this.ctx.storage.setAlarm(expiresAt(state) * 1000);
      return;
    }
    this.#state = undefined;
    await this.ctx.storage.deleteAll();
  }
}
