import { DurableObject } from "cloudflare:workers";
import type { Limits } from "../keys/schemas";
import {
  decide,
  expiresAt,
  overrideLimits,
  revokeKey,
  settle,
  unban,
  usageOf,
  type BanRule,
  type LeaseAnswer,
  type LimiterState,
  type RefusalBatch,
  type Unspent,
  type Usage,
} from "./policy";

const STATE = "state";
/** KV's propagation (about 60 s) and the worker's key cache (5 s), with room to spare. */
const LIMITS_OVERRIDE_MS = 120_000;

export interface LeaseRequest {
  limits: Limits;
  ban: BanRule;
  /** Admissions wanted, the asking request's own included. */
  want: number;
  /** A renewal ahead of need: no client request is refused if there is no room. */
  speculative: boolean;
  /** Refusals the isolate answered itself, counted before this request is decided. */
  refusals?: RefusalBatch;
}

export interface SettleRequest {
  ban: BanRule;
  unspent: Unspent[];
  refusals?: RefusalBatch;
}

export interface SettleAnswer {
  refusedInARow: number;
  banEnds: number;
}

/**
 * One object per API key (or per address group, for callers without one): the
 * counter of record. It grants leases of admissions that worker isolates spend
 * on their own (README, "Rate limits"). Each method reads, decides and writes
 * with no await in between, so concurrent calls are decided one after another
 * and never over-grant. State lives in the object's SQLite storage, written
 * before the answer leaves, so a grant survives eviction and restarts; a copy
 * in memory saves the read on every call but the first of each instance.
 */
export class RateLimiter extends DurableObject<Env> {
  #state: LimiterState | undefined;

  acquire(request: LeaseRequest): LeaseAnswer {
    const now = Date.now();
    const previous = this.#load();
    const settled = request.refusals ? settle(previous, [], request.refusals, request.ban, now) : previous;
    const { state, verdict } = decide(settled, request.limits, request.ban, now, request.want, request.speculative);
    this.#save(previous, state);
    return verdict;
  }

  settle(request: SettleRequest): SettleAnswer {
    const previous = this.#load();
    const state = settle(previous, request.unspent, request.refusals, request.ban, Date.now());
    this.#save(previous, state);
    return { refusedInARow: state.refusedInARow, banEnds: state.bannedUntil };
  }

  /** The operator API's view of this budget. */
  usage(): Usage {
    return usageOf(this.#load(), Date.now());
  }

  /** The operator API's unban: the ban ends now, and isolates learn it at their next call (within a lease's length). */
  unban(): Usage {
    const previous = this.#load();
    this.#save(previous, unban(previous, Date.now()));
    return this.usage();
  }

  /**
   * The operator API's update: these limits from every isolate's next call on
   * (within a lease's length), for as long as KV and the key caches may still
   * hand isolates the old ones.
   */
  updateLimits(limits: Limits): Usage {
    const previous = this.#load();
    this.#save(previous, overrideLimits(previous, limits, LIMITS_OVERRIDE_MS, Date.now()));
    return this.usage();
  }

  /** The operator API's revocation: isolates refuse the key from their next call on (within a lease's length). */
  revoke(keyId: string): Usage {
    const previous = this.#load();
    this.#save(previous, revokeKey(previous, keyId, Date.now()));
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

  /** Forgets the caller once nothing stored can affect a decision any more. */
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
