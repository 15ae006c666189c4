import { z } from "zod";
import { ApiError } from "../framework/api-error";
import { readJsonBody } from "../framework/operations/read-json-body";
import { callDependency } from "../lib/call-dependency";
import { Limits } from "../account/plans";
import { audited, accountOfRecord, keyOperation } from "./key-operation";

/** Sets an account's limits (its plan stays) from every isolate's next ask; audited. */
export const setBudgetLimits = keyOperation(
  {
    operationId: "setBudgetLimits",
    method: "post",
    action: "limits",
    summary: "Set the account's limits",
    description: "The account's own limits, for every key of it, from every isolate's next call (within 5 s); audited.",
    errors: ["not_found", "invalid_limits", "invalid_body", "unsupported_media_type", "body_too_large"],
  },
  async (c, { record }) => {
    // JSON as every body is read (415, 413, 400 invalid_body); then the limits' own rules, with their own code.
    const limits = Limits.strict().safeParse(await readJsonBody(c, z.unknown()));
    if (!limits.success)
      throw new ApiError("invalid_limits", 'Send {"perMinute": N, "perDay": N}, both positive whole numbers.');
    return audited(c, record, "update", { limits: limits.data }, () =>
      callDependency("account", () => accountOfRecord(c, record).setPlan({ limits: limits.data })),
    );
  },
);
