import { DurableObject } from "cloudflare:workers";
import type { Limits } from "../schemas/api-key";
import { decide, expiresAt, type BanRule, type LimiterState, type Verdict } from "./policy";

const STATE = "state";

/**
 * One object per API key (or per address, for callers without one). check()
 * reads, decides and writes with no await in between, so concurrent requests
 * are decided one after another and never over-admit. State lives in the
 * object's SQLite storage, so it survives eviction and restarts; a copy in
 * memory saves the read on every request but the first of each instance.
 */
export class RateLimiter extends DurableObject<Env> {
  #state: LimiterState | undefined;

  check(limits: Limits, ban: BanRule): Verdict {
    const storage = this.ctx.storage;
    // This instance is the only writer, so what it last wrote is what storage holds.
    const previous = this.#state ?? storage.kv.get<LimiterState>(STATE);
    const { state, verdict } = decide(previous, limits, ban, Date.now());
    storage.kv.put(STATE, state);
    this.#state = state;
    if (!previous || expiresAt(previous) !== expiresAt(state)) {
      void storage.setAlarm(expiresAt(state) * 1000);
    }
    return verdict;
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
