/**
 * Everything one worker isolate keeps between requests, in one place. An
 * isolate serves many requests, of many callers, until the runtime ends it;
 * each entry says how long what it holds lives and why sharing it between
 * requests is safe. Made once per isolate, handed to the modules that use
 * it by the composition (worker.ts and the v1, v2 registries): nothing else keeps
 * state at module level.
 */
import type { StoredKey } from "../keys/lookup";
import { TtlCache } from "../lib/ttl-cache";
import { LeaseClient } from "../account/lease-client";
import { WrittenRefusals } from "../account/refusal-replay";
import type { WrittenHeaders } from "../account/rate-limit-headers";
import type { WindowReport } from "../account/protocol";
import { OwnWrites } from "../read-your-writes/own-writes";
import { VersionMemory } from "../read-your-writes/recent-version";
import { WholeFills } from "../orders/whole-list/order-list-cache";
import type { ConfigResult } from "../framework/read-config";
import { AccessKeys } from "../operator/access-assertion";
import { GithubPublicKeys } from "../revocation/github-public-keys";

export const isolateMemory = {
  /**
   * Leases and what the isolate knows of each caller's limits (bans,
   * refusals, revocations), for up to 10,000 callers, least recently seen
   * dropped first. Safe: an isolate admits only what the caller's account object
   * granted it, and a lease expires within 5 s (docs/design/rate-limits.md#leases).
   */
  leases: new LeaseClient(),
  /**
   * The last refusal written to each caller this isolate refuses, by the
   * credential it sent, 1,000 callers at most (about 1.5 KB each): repeated, with a new request
   * id, while the caller's book refuses it in the same state (at most a
   * second: the whole seconds in its headers change). Safe: it is replayed
   * only while the account's word on the key it was written for is fresh (a
   * lease's length), under the same bindings (account/refusal-replay.ts).
   */
  refusals: new WrittenRefusals(),
  /**
   * The rate-limit headers last written for each refused state, held weakly
   * by the object's answer they were written from, so they go with it (at
   * most a second: the whole seconds in them change). Safe: they are the
   * same text for every caller refused in that state, and read-only.
   */
  refusalHeaders: new WeakMap<WindowReport, WrittenHeaders>(),
  /**
   * Keys' pointers (their id and account) by the key as presented, so a known
   * key costs no SHA-256 (keys/lookup.ts): 5 minutes a pointer, 1 s a miss,
   * 10,000 at most. Safe: a pointer never changes once written, and decides
   * nothing: the key's account does.
   */
  apiKeys: new TtlCache<string, StoredKey>(10_000),
  /**
   * Operators' console sessions this isolate found ended (signed out, their
   * operator revoked, their token replaced), for their 12 hours at most,
   * 1,000 at most: their cookies are counted by address again, not on the
   * session's own account (operator/operator-sessions.ts). Safe: it only ever
   * takes an account away; the guard reads every session's row regardless.
   */
  endedOperatorSessions: new TtlCache<string, true>(1_000),
  /**
   * Digests of named operators' tokens found live or no live operator's, for a minute (require-operator.ts), 1,000
   * at most: an unknown one costs no read of the operators' table before the limiter, and a live one is read even
   * from an address group banned here. Safe: a digest; the guard reads every token's row regardless.
   */
  operatorTokens: new TtlCache<string, boolean>(1_000),
  /**
   * The order list's version as last read, reused for ORDER_LIST_VERSION_REUSE_MS
   * by lists without a bookmark. Safe: such a list may be as stale as a
   * replica anyway; a cancel through the isolate forgets it (docs/design/order-list.md#the-cache).
   */
  listVersion: new VersionMemory(),
  /**
   * Which cached fill of each of the last 16 list versions is whole, as its
   * marker said, for as long as the cache keeps the body (10 minutes), so
   * a hit is one lookup. Safe: it names only fills a marker named, and a
   * body the cache let go is a miss (docs/design/order-list.md#the-cache).
   */
  listFills: new WholeFills(),
  /**
   * The bookmark of the newest cancel through this isolate, for a minute:
   * reads read at least that new (or the client's bookmark, if newer), so a
   * canceller's next list or page never comes from a replica that lags
   * behind its cancel. Safe: it only ever asks D1 for newer data
   * (docs/api.md#orders).
   */
  ownWrites: new OwnWrites(60_000),
  /**
   * The vars, parsed and checked, per bindings object (one per environment):
   * for the isolate's life. Safe: vars only change with a new deployment,
   * which starts new isolates.
   */
  configs: new WeakMap<Env, ConfigResult>(),
  /**
   * Each version's OpenAPI document as JSON, per parsed config: for the
   * isolate's life. Safe: it depends only on the operations and the vars.
   */
  documents: { v1: new WeakMap<object, string>(), v2: new WeakMap<object, string>() },
  /**
   * The signing keys each Cloudflare Access team publishes, as jose fetched
   * them (operator/access-assertion.ts): kept 10 minutes, fetched again
   * sooner for a key id not seen yet, at most every 30 s. Safe: they are
   * public keys, and a key Access retires is no longer published, so it
   * goes at the next fetch.
   */
  accessKeys: new AccessKeys(),
  /**
   * GitHub's secret scanning keys, by the URL they came from: a day at most, fetched again at most once a minute
   * (github-public-keys.ts).
   */
  githubKeys: new GithubPublicKeys(),
  /**
   * GitHub's verified reports answered here within the hour, by their bytes' digest (scanning-credential.ts): the
   * same report again is not counted on GitHub's budget. Safe: a digest of bytes GitHub signed, nothing else.
   */
  answeredReports: new TtlCache<string, true>(1_000),
};

export type IsolateMemory = typeof isolateMemory;

/**
 * Empties the isolate's memory, as a new isolate starts: the workers tests
 * run every file in one runtime (vitest.config.ts), each after its storage
 * was emptied, and each must meet the worker as a new isolate would. Every
 * holder with a clear() is emptied; the weak maps, which have none, stay:
 * each holds only what follows from its key (a bindings object's vars, a
 * record's account, a config's document).
 */
export function forgetIsolateMemory(): void {
  for (const held of Object.values(isolateMemory)) if ("clear" in held) held.clear();
}
