/**
 * Whether an account still has a key with `orders:read`, without which its webhooks are not delivered
 * (docs/api.md#webhook-endpoints). Asked of the account by each lane, cached 5 s, so a revocation or expiry stops
 * deliveries within 5 s.
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
