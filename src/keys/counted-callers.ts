import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import type { CountedCallers, Recognition } from "../account/request-admission";
import { addressGroup } from "../lib/client-address";
import { bearerToken } from "./key-format";
import { ANONYMOUS_LIMITS, NEVER_BANNED, OPERATOR_LIMITS } from "../account/plans";
import { accountOf } from "../account/key-record";
import { CHALLENGE, OTHER_CREDENTIAL_HEADERS, refusedKeyCaller } from "./caller";
import { ApiError } from "../framework/api-error";
import { actsOnlyOnItself } from "./key-refusal";

/**
 * How rateLimit() counts callers: a key against its account, an operator or a verified partner against their own,
 * anyone else against its address group. A key or a bare address is known again by what it sent while the account's
 * word is fresh; a cookie never.
 */
export const countedCallers = (): CountedCallers => ({
  accountOf(c) {
    const caller = c.get("caller");
    if (caller.kind === "presented") return { name: caller.account, keyId: caller.keyId };
    if (caller.kind === "key") return { name: accountOf(caller.key), keyId: caller.key.id };
    if (caller.operator) return { name: `operator:${caller.operator}`, limits: OPERATOR_LIMITS };
    if (caller.partner)
      return { name: `partner:${caller.partner.name}`, limits: caller.partner.limits, ban: NEVER_BANNED };
    return { name: `ip:${caller.address}`, limits: ANONYMOUS_LIMITS };
  },
  verified(c, key) {
    const caller = c.get("caller");
    if (caller.kind === "anonymous") return;
    const { address, session } = caller;
    if (key.standing === "live")
      c.set("caller", { kind: "key", key: key.record!, address, ...(session && { session }) });
    else
      c.set("caller", refusedKeyCaller({ address, ...(session && { session }) }, key.standing, key.record?.expiresAt));
  },
  refusal(c, access, need) {
    if (access === "acts_only_on_itself") return actsOnlyOnItself(need.beyondItself!);
    const caller = c.get("caller");
    if (access === "insufficient_scope" && caller.kind === "key") {
      const scope = need.scopes.find((one) => !caller.key.scopes.includes(one));
      return new ApiError("insufficient_scope", `This API key lacks the ${scope} scope this operation needs.`, {
        "WWW-Authenticate": `${CHALLENGE}, error="insufficient_scope", scope="${scope}"`,
      });
    }
    if (caller.kind !== "anonymous") throw new Error(`a key refused as ${access} was left the caller`);
    return new ApiError(caller.rejection.code, caller.rejection.message, caller.rejection.headers);
  },
  credentialOf,
  recognise(c) {
    const caller = c.get("caller");
    const credential = credentialOf(c);
    if (credential === undefined) return undefined;
    const restore = (request: Context<AppEnv>) => request.set("caller", caller);
    if (caller.kind === "anonymous") {
      // Counted by its address only when it sent nothing: a key not valid is looked up again (its miss lasts 1 s).
      return caller.operator === undefined &&
        caller.partner === undefined &&
        c.req.header("Authorization") === undefined
        ? { credential, holds: () => true, restore }
        : undefined;
    }
    // Only the canonical spelling is kept, so no caller fills the isolate with copies of one refusal.
    const authorization = c.req.header("Authorization");
    const token = bearerToken(authorization);
    if (caller.kind !== "key" || caller.session || token === undefined || authorization !== `Bearer ${token}`)
      return undefined;
    // Repeated only while the account's word on the key is fresh: the lease client asks (refuseKnown).
    return { credential, holds: () => true, restore } satisfies Recognition;
  },
});

/** What names a caller before identification: the Authorization header, or with no credential, the address. */
function credentialOf(c: Context<AppEnv>): string | undefined {
  const authorization = c.req.header("Authorization");
  if (authorization !== undefined) return `key ${authorization}`;
  if (OTHER_CREDENTIAL_HEADERS.some((name) => c.req.header(name) !== undefined)) return undefined;
  return c.req.header("Cookie") === undefined ? `ip:${addressGroup(c.req.header("CF-Connecting-IP"))}` : undefined;
}
