import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import { accountOf, type ApiKeyRecord } from "../account/key-record";

/**
 * A key this request changed in its account: this isolate drops the account's earlier word on it once the
 * request is answered (account/rate-limit.ts), so its next request here is decided afresh, not a lease later.
 */
export function forgetKey(c: Context<AppEnv>, key: ApiKeyRecord): void {
  c.set("changedKeys", [...(c.get("changedKeys") ?? []), { account: accountOf(key), keyId: key.id }]);
}
