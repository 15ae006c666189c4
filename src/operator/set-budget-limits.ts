import { z } from "zod";
import { ApiError } from "../framework/api-error";
import { readJsonBody } from "../framework/operations/read-json-body";
import { callDependency } from "../lib/call-dependency";
import { Limits } from "../account/plans";
import { budgetOf } from "../account/key-record";
import { writeBudgetFields } from "../keys/budget-records";
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
      await writeBudgetFields(c, budgetOf(record), { limits, limitsSetAt });
      return usage;
    });
  },
);
