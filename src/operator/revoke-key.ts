import { callDependency } from "../lib/dependency";
import { storeKeyRecord } from "../keys/layout";
import { budgetOf } from "../keys/api-key-record";
import { audited, keyOperation, limiterOf } from "./key-operation";

/** Revokes a key for good: KV first, then the budget's object refuses it everywhere within a lease; audited. */
export const revokeKey = keyOperation(
  {
    operationId: "revokeKey",
    method: "post",
    action: "revoke",
    summary: "Revoke a key, for good, everywhere within a lease",
    description:
      "Writes the key's record revoked (KV, for good), then has the budget's object refuse the key from every isolate's next call, without counting it, until KV has spread the record; audited.",
  },
  (c, key) => {
    const at = key.record.revokedAt ?? new Date().toISOString();
    return audited(c, key.record, "revoke", { revokedAt: at }, async () => {
      if (!key.record.revokedAt) await storeKeyRecord(c.env.API_KEYS, key.hash, { ...key.record, revokedAt: at });
      const usage = await callDependency("rate limiter", () => limiterOf(c, key.record).revoke(key.record.id));
      c.set("revocation", { budget: budgetOf(key.record), revoked: usage.revoked });
      return usage;
    });
  },
);
