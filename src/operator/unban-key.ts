import { callDependency } from "../lib/call-dependency";
import { audited, keyOperation, accountOfRecord } from "./key-operation";

/** Ends an account's ban now, audited. */
export const unbanKey = keyOperation(
  {
    operationId: "unbanKey",
    method: "post",
    action: "unban",
    summary: "End a ban now",
    description: "Ends the account's ban and starts its streak over; audited with the operator's name.",
  },
  (c, { record }) =>
    audited(c, record, "unban", {}, () => callDependency("rate limiter", () => accountOfRecord(c, record).unban())),
);
