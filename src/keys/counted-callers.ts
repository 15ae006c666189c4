import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import type { Budget, CountedCallers, Recognition } from "../account/request-admission";
import type { TtlCache } from "../lib/ttl-cache";
import { addressGroup } from "../lib/client-address";
import { bearerToken } from "./bearer";
import type { StoredKey } from "./lookup";
import { ANONYMOUS_LIMITS, NEVER_BANNED, OPERATOR_LIMITS, PLAN_LIMITS_REVISED_AT } from "../account/plans";
import { budgetOf, limitsFor, limitsStampOf, type ApiKeyRecord } from "../account/key-record";
import { invalidCaller, OTHER_CREDENTIAL_HEADERS, sessionEndedCaller } from "./identify-caller";

/**
 * How rateLimit() counts callers: a key against its budget, an operator and
 * a partner whose signature verified against their own,
 * anyone else against its address group. A key's budget is worked out once per record
 * the isolate holds (`budgets`, keyed by the cached record itself, so it
 * lives exactly as long as that record), not on every request. A key, or
 * an address group that sent no credential, is known again by what it sent
 * while the key's record is the one `apiKeys` holds; a cookie is never.
 */
export const countedCallers = (
  budgets: WeakMap<ApiKeyRecord, Budget>,
  apiKeys: TtlCache<string, StoredKey>,
): CountedCallers => ({
  budgetOf(c) {
    const caller = c.get("caller");
    if (caller.kind !== "key") {
      if (caller.operator)
        return { name: `operator:${caller.operator}`, limits: OPERATOR_LIMITS, limitsSetAt: PLAN_LIMITS_REVISED_AT };
      if (caller.partner)
        return {
          name: `partner:${caller.partner.name}`,
          limits: caller.partner.limits,
          limitsSetAt: PLAN_LIMITS_REVISED_AT,
          ban: NEVER_BANNED,
        };
      return { name: `ip:${caller.address}`, limits: ANONYMOUS_LIMITS, limitsSetAt: PLAN_LIMITS_REVISED_AT };
    }
    let budget = budgets.get(caller.key);
    if (!budget) {
      budget = {
        name: budgetOf(caller.key),
        limits: limitsFor(caller.key),
        limitsSetAt: limitsStampOf(caller.key),
        keyId: caller.key.id,
      };
      budgets.set(caller.key, budget);
    }
    return budget;
  },
  demote(c) {
    const caller = c.get("caller");
    // A console session learns why it ended: its key was revoked.
    c.set(
      "caller",
      caller.kind === "key" && caller.session
        ? sessionEndedCaller(caller.address, "its key was revoked")
        : invalidCaller(caller.address),
    );
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
    // Kept only under the header as written canonically: other spellings of the same key (any case, any
    // spaces) are identified in full each time, so no caller can fill the isolate with copies of one refusal.
    const authorization = c.req.header("Authorization");
    const token = bearerToken(authorization);
    if (caller.session || token === undefined || authorization !== `Bearer ${token}`) return undefined;
    const record = caller.key;
    const expires = record.expiresAt === undefined ? Infinity : Date.parse(record.expiresAt);
    return {
      credential,
      holds(now) {
        const stored = apiKeys.get(token, now);
        return now < expires && stored?.kind === "found" && stored.record === record;
      },
      restore,
    } satisfies Recognition;
  },
});

/**
 * What names a request's caller before identification: the Authorization
 * header as sent, or, with none and no cookie (which may stand for a key or
 * an operator) nor another credential (GitHub's signature, Access's assertion: checked only by identification), the
 * address group it is counted by.
 */
function credentialOf(c: Context<AppEnv>): string | undefined {
  const authorization = c.req.header("Authorization");
  if (authorization !== undefined) return `key ${authorization}`;
  if (OTHER_CREDENTIAL_HEADERS.some((name) => c.req.header(name) !== undefined)) return undefined;
  return c.req.header("Cookie") === undefined ? `ip:${addressGroup(c.req.header("CF-Connecting-IP"))}` : undefined;
}
