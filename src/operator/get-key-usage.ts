import { accountOf } from "../account/key-record";
import { jsonBody } from "../framework/counted-body";
import { keyOperation, accountOfRecord } from "./key-operation";

/** A key's account as its object counts it now. */
export const getKeyUsage = keyOperation(
  {
    operationId: "getKeyUsage",
    method: "get",
    action: "usage",
    summary: "A key's account as its object counts it now",
    description: "Both windows (grants included), the refusal streak, the ban's end, the account's revoked keys.",
  },
  async (c, { record }) =>
    jsonBody(c, { keyId: record.id, budget: accountOf(record), usage: await accountOfRecord(c, record).usage() }),
);
