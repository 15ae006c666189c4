import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import { accountOf, type ApiKeyRecord } from "../account/key-record";

/** A key this request changed: the isolate drops its word on it, so its next request is decided afresh. */
export function forgetKey(c: Context<AppEnv>, key: ApiKeyRecord): void {
  c.set("changedKeys", [...(c.get("changedKeys") ?? []), { account: accountOf(key), keyId: key.id }]);
}
