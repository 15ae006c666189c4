import type { Budget, CountedCallers } from "../limiter/rate-limit";
import { ANONYMOUS_LIMITS, OPERATOR_SESSION_LIMITS, PLAN_LIMITS_REVISED_AT } from "../limiter/plans";
import { budgetOf, limitsFor, limitsStampOf, type ApiKeyRecord } from "./api-key-record";
import { invalidCaller, sessionEndedCaller } from "./identify-caller";

/**
 * How rateLimit() counts callers: a key against its budget, an operators'
 * console session against its own, anyone else against its address group. A key's budget is worked out once per record
 * the isolate holds (`budgets`, keyed by the cached record itself, so it
 * lives exactly as long as that record), not on every request.
 */
export const countedCallers = (budgets: WeakMap<ApiKeyRecord, Budget>): CountedCallers => ({
  budgetOf(c) {
    const caller = c.get("caller");
    if (caller.kind !== "key") {
      if (caller.operatorSession) return { name: `operator-session:${caller.operatorSession}`, limits: OPERATOR_SESSION_LIMITS, limitsSetAt: PLAN_LIMITS_REVISED_AT };
      return { name: `ip:${caller.address}`, limits: ANONYMOUS_LIMITS, limitsSetAt: PLAN_LIMITS_REVISED_AT };
    }
    let budget = budgets.get(caller.key);
    if (!budget) {
      budget = { name: budgetOf(caller.key), limits: limitsFor(caller.key), limitsSetAt: limitsStampOf(caller.key), keyId: caller.key.id };
      budgets.set(caller.key, budget);
    }
    return budget;
  },
  demote(c) {
    const caller = c.get("caller");
    // A console session learns why it ended: its key was revoked.
    c.set("caller", caller.kind === "key" && caller.session ? sessionEndedCaller(caller.address, "its key was revoked") : invalidCaller(caller.address));
  },
});
