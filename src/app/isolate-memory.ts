/**
 * Everything one worker isolate keeps between requests, each entry with how long it lives and why sharing it between
 * requests is safe. Made once per isolate and handed to its users by the composition: nothing else keeps state at
 * module level.
 */
import type { StoredKey } from "../keys/lookup";
import { TtlCache } from "../lib/ttl-cache";
import { LeaseClient } from "../account/lease-client";
import { WrittenRefusals } from "../account/rate-limit";
import type { WrittenHeaders } from "../account/rate-limit-headers";
import type { WindowReport } from "../account/protocol";
import { OwnWrites } from "../read-your-writes/own-writes";
import { VersionMemory } from "../read-your-writes/recent-version";
import { WholeFills } from "../orders/whole-list/order-list-cache";
import type { ConfigResult } from "../framework/read-config";
import { AccessKeys } from "../operator/access-assertion";
import { GithubPublicKeys } from "../revocation/github-public-keys";

export const isolateMemory = {
  /** Leases and what is known of callers' limits. Safe: only what the account granted, for 5 s at most. */
  leases: new LeaseClient(),
  /**
   * The last refusal written to each refused caller, by credential, 1,000 at most: replayed with a new request id while
   * the caller's book refuses it in the same state. Safe: only while the account's word on its key is fresh, under the
   * same bindings (account/rate-limit.ts).
   */
  refusals: new WrittenRefusals(),
  /** Headers written per refused state, held weakly by their answer. Safe: read-only, the same for all. */
  refusalHeaders: new WeakMap<WindowReport, WrittenHeaders>(),
  /** Keys' pointers by the key presented, 5 minutes. Safe: a pointer never changes and decides nothing. */
  apiKeys: new TtlCache<string, StoredKey>(10_000),
  /** Operators' sessions found ended, 12 hours. Safe: it only takes away; the guard reads every session. */
  endedOperatorSessions: new TtlCache<string, true>(1_000),
  /** Operators' token digests found live or not, a minute. Safe: the guard reads every token's row. */
  operatorTokens: new TtlCache<string, boolean>(1_000),
  /** The list's version, reused briefly by lists without a bookmark. Safe: a replica may be as stale. */
  listVersion: new VersionMemory(),
  /** Which fill of recent list versions is whole. Safe: only fills a marker named; a lost body is a miss. */
  listFills: new WholeFills(),
  /** The newest cancel's bookmark here, a minute. Safe: it only asks D1 for newer data. */
  ownWrites: new OwnWrites(60_000),
  /** The parsed vars per bindings. Safe: vars change only with a deployment, which starts new isolates. */
  configs: new WeakMap<Env, ConfigResult>(),
  /**
   * Each version's OpenAPI document as JSON, per parsed config. Safe: it depends only on the operations and the vars.
   */
  documents: { v1: new WeakMap<object, string>(), v2: new WeakMap<object, string>() },
  /** Access teams' signing keys, 10 minutes. Safe: public keys; a retired one goes at the next fetch. */
  accessKeys: new AccessKeys(),
  /**
   * GitHub's secret scanning keys, by URL: a day at most, fetched again at most once a minute (github-public-keys.ts).
   */
  githubKeys: new GithubPublicKeys(),
  /** GitHub's reports answered within the hour, by digest. Safe: a digest of bytes GitHub signed. */
  answeredReports: new TtlCache<string, true>(1_000),
};

export type IsolateMemory = typeof isolateMemory;

/**
 * Empties the isolate's memory, as a new isolate starts: the workers tests run every file in one runtime, and each must
 * meet the worker as a new isolate would. The weak maps stay: each holds only what follows from its key.
 */
export function forgetIsolateMemory(): void {
  for (const held of Object.values(isolateMemory)) if ("clear" in held) held.clear();
}
