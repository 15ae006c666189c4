import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import type { RequestParty } from "../framework/middleware/request-log";
import { accountOf } from "../account/key-record";
import type { Caller } from "./caller";

/** The request as the request log names it: the key by its id only, never the key. */
export function requestParty(c: Context<AppEnv>): RequestParty {
  const caller = c.get("caller") as Caller | undefined;
  const limit = c.get("limit") ?? null;
  if (caller?.kind === "key")
    return { keyId: caller.key.id, plan: caller.key.plan, limit, index: accountOf(caller.key) };
  return { keyId: null, plan: null, limit, index: caller && `ip:${caller.address}` };
}
