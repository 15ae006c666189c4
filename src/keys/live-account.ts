/**
 * Whether an account still has a key that may read what its webhooks carry
 * (`orders:read`: every event holds an order): they are delivered only while
 * it does (docs/api.md#webhook-endpoints). Asked of the account itself where
 * deliveries are made (each endpoint's lane, with a 5 s cache), so a
 * revocation stops them within 5 s, and an expiry with no action at all.
 */
import { accountStub } from "../account/account-stub";
import { callDependency } from "../lib/call-dependency";
import type { TtlCache } from "../lib/ttl-cache";

/** How long one answer is kept per lane: a revocation reaches deliveries this much later. */
const LIVENESS_CACHE_MS = 5_000;

export type AccountLiveness = "live" | "dead";

export async function accountLiveness(
  accounts: Env["ACCOUNTS"],
  account: string,
  cache: TtlCache<string, AccountLiveness>,
  now = Date.now(),
): Promise<AccountLiveness> {
  const cached = cache.get(account, now);
  if (cached !== undefined) return cached;
  const live = await callDependency("account", () => accountStub(accounts, account).hasLiveReader());
  const liveness: AccountLiveness = live ? "live" : "dead";
  cache.set(account, liveness, LIVENESS_CACHE_MS, now);
  return liveness;
}
