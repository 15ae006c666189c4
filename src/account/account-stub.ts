import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import type { Account } from "./account";
import { accountOf, type ApiKeyRecord } from "./key-record";

type Methods = "acquire" | "settle" | "addKey" | "key" | "keys" | "revokeKey" | "endLeak" | "rotateKey" | "updateKey";
type MoreMethods = "setPlan" | "hasLiveReader" | "usage" | "usageHistory" | "unban" | "forgive" | "admitTestEvent";
type AnswerMethods = "beginIdempotent" | "finishIdempotent" | "abandonIdempotent";

/** The account's methods as the class declares them: RPC's generated types blur the unions some of them answer. */
export type AccountStub = {
  [Name in Methods | MoreMethods | AnswerMethods]: (
    ...args: Parameters<Account[Name]>
  ) => Promise<Awaited<ReturnType<Account[Name]>>>;
};

/** An account's Durable Object, by the account's name. */
export const accountStub = (accounts: Env["ACCOUNTS"], name: string): AccountStub =>
  accounts.getByName(name) as unknown as AccountStub;

/** A key this request changed through its account: the isolate drops its word on it, so its next ask is afresh. */
export function forgetKey(c: Context<AppEnv>, key: ApiKeyRecord): void {
  c.set("changedKeys", [...(c.get("changedKeys") ?? []), { account: accountOf(key), keyId: key.id }]);
}
