import { accountOf } from "../account/key-record";
import { UsageHistory, usageHistoryResponse, usageQueryParameters } from "../usage/usage-operations";
import { keyOperation } from "./key-operation";

/** A key's account's usage history, as GET /v2/usage answers the key itself. */
export const getKeyUsageHistory = keyOperation(
  {
    operationId: "getKeyUsageHistory",
    method: "get",
    action: "usage/history",
    summary: "A key's account's usage history",
    description:
      "As GET /v2/usage answers the key itself: admitted and refused per minute, hour or day, exactly as the limiter " +
      "decided.",
    errors: ["not_found", "invalid_query"],
    queryParameters: usageQueryParameters,
    body: UsageHistory,
  },
  (c, { record }) => usageHistoryResponse(c, accountOf(record)),
);
