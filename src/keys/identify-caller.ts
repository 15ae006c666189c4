/**
 * Who is calling (docs/api.md#authentication): a key, presented or behind a console session, whose account says with
 * its limits whether it stands; or an address group without one, and why. Once per request, before the limiter; nobody
 * is refused here.
 */
import type { MiddlewareHandler } from "hono";
import { findApiKey, type StoredKey } from "./lookup";
import type { TtlCache } from "../lib/ttl-cache";
import type { AppEnv } from "../framework/app-env";
import { parseBearer } from "./key-format";
import { addressGroup } from "../lib/client-address";
import { logLine } from "../lib/log";
import { invalidCaller, MISSING_KEY, type Caller, type OtherCredential } from "./caller";

/** Identifies without refusing: the rate limit step refuses, after counting, so keyless requests are counted too. */
export function identifyCaller(
  apiKeys: TtlCache<string, StoredKey>,
  otherCredential?: OtherCredential,
): MiddlewareHandler<AppEnv> {
  return async (c, next) => {
    const address = addressGroup(c.req.header("CF-Connecting-IP"));
    const authorization = c.req.header("Authorization");
    const other = otherCredential ? await otherCredential(c, address) : undefined;
    if (other) {
      c.set("caller", other);
      return next();
    }
    const { caller, problems } = await callerOf(authorization, c.env.API_KEYS, apiKeys, address);
    // A record nobody can trust is a fault for operators to fix; the client is told only that the key is not valid.
    if (problems)
      logLine("error", c.get("requestId"), "an API key's record in KV does not fit the schema; the key is refused", {
        problems,
      });
    c.set("caller", caller);
    await next();
  };
}

async function callerOf(
  authorization: string | undefined,
  kv: KVNamespace,
  apiKeys: TtlCache<string, StoredKey>,
  address: string,
): Promise<{ caller: Caller; problems?: string }> {
  const bearer = parseBearer(authorization);
  if (bearer.kind === "missing") return { caller: { kind: "anonymous", address, rejection: MISSING_KEY } };
  const found = bearer.kind === "token" ? await findApiKey(kv, bearer.token, apiKeys) : undefined;
  if (found?.kind === "invalid") return { caller: invalidCaller(address), problems: found.problems };
  if (found?.kind !== "found") return { caller: invalidCaller(address) };
  return { caller: { kind: "presented", keyId: found.pointer.keyId, account: found.pointer.account, address } };
}
