import type { Context } from "hono";
import { z } from "zod";
import type { AppEnv } from "../framework/app-env";
import { ApiError } from "../framework/api-error";
import { readJsonBody } from "../framework/operations/read-json-body";
import { callDependency } from "../lib/call-dependency";
import { Limits } from "../limiter/plans";
import { budgetOf, isUsable } from "../keys/api-key-record";
import { budgetKeysPage, MAX_KEYS_PAGE } from "../keys/budget-keys";
import { storeKeyRecord } from "../keys/kv-layout";
import { findApiKeyById } from "../keys/lookup";
import { audited, keyOperation, limiterOf } from "./key-operation";

/** New limits, and the stamp `keys update` wrote into the records with them (absent: now). */
const LimitsUpdate = Limits.extend({ setAt: z.iso.datetime({ offset: true }).optional() });

/** Sets a budget's limits from every isolate's next call, and for good in its keys' records; audited. */
export const setBudgetLimits = keyOperation(
  {
    operationId: "setBudgetLimits",
    method: "post",
    action: "limits",
    summary: "Set the budget's limits",
    description:
      "The budget's limits from every isolate's next call, stamped setAt (the stamp keys update wrote), written into " +
      "every live key's record so they hold until changed; audited.",
    errors: ["not_found", "invalid_limits", "invalid_body", "unsupported_media_type", "body_too_large"],
  },
  async (c, { record }) => {
    // JSON as every body is read (415, 413, 400 invalid_body); then the limits' own rules, with their own code.
    const update = LimitsUpdate.safeParse(await readJsonBody(c, z.unknown()));
    if (!update.success) {
      throw new ApiError(
        "invalid_limits",
        'Send {"perMinute": N, "perDay": N}, both positive whole numbers, and optionally "setAt", an RFC 3339 instant.',
      );
    }
    const { setAt, ...limits } = update.data;
    const stamp = setAt === undefined ? Date.now() : Date.parse(setAt);
    const limitsSetAt = new Date(stamp).toISOString();
    return audited(c, record, "update", { limits, limitsSetAt }, async () => {
      const usage = await callDependency("rate limiter", () => limiterOf(c, record).updateLimits(limits, stamp));
      await writeLimitsToRecords(c, budgetOf(record), limits, limitsSetAt);
      return usage;
    });
  },
);

/**
 * The budget's limits written into every live key's record, as `keys update` writes them, so they hold after
 * the object forgets the budget (the day it last counted, and 10 minutes): limits an operator sets stay until
 * changed. A record stamped so already (`keys update`, which calls this after its own write) is left as it is.
 */
async function writeLimitsToRecords(
  c: Context<AppEnv>,
  budget: string,
  limits: Limits,
  limitsSetAt: string,
): Promise<void> {
  const kv = c.env.API_KEYS;
  const { keys } = await budgetKeysPage(kv, budget, { limit: MAX_KEYS_PAGE });
  for (const key of keys.filter((each) => isUsable(each) && each.limitsSetAt !== limitsSetAt)) {
    // A record read here may be a minute old: written back whole, it would undo a revocation or a rotation made
    // meanwhile elsewhere. The budget's object knows every one of the last 10 minutes: such a key is left alone.
    const standing = await callDependency("rate limiter", () => c.env.RATE_LIMITER.getByName(budget).standing(key.id));
    if (standing.ended || standing.rotatedAway) continue;
    const stored = await findApiKeyById(kv, key.id);
    if (stored && isUsable(stored.record) && stored.record.rotatedTo === undefined)
      await storeKeyRecord(kv, stored.hash, { ...stored.record, limits, limitsSetAt });
  }
}
