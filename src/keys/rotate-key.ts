import type { Context } from "hono";
import type { AppEnv } from "../framework/app-env";
import { ApiError } from "../framework/api-error";
import { callDependency } from "../lib/call-dependency";
import { budgetOf, isUsable } from "../account/key-record";
import { auditedKeyOperation } from "./audited-key-operation";
import { keyPrefixOf, newApiKey, putApiKey } from "./issue-key";
import { storeKeyRecord } from "./kv-layout";
import { withKnownEnd } from "./budget-records";
import type { StoredKeyRecord } from "./lookup";

/**
 * A key replaced by a new one of the same budget, plan, limits, scopes and
 * expiry (the owner's rotation, the operator API's): the old key works
 * through the grace period, then expires, and acts only on itself from now
 * on. Both audited, by `actor`. Returns the new key: its one showing.
 */
export async function rotateKey(c: Context<AppEnv>, stored: StoredKeyRecord, graceSeconds: number, actor: string) {
  const limiter = c.env.ACCOUNTS.getByName(budgetOf(stored.record));
  // The budget's object, not KV, says whether the key still works: KV may show a key revoked or rotated elsewhere a
  // minute ago as it was, and writing that record back would undo the change.
  const standing = await callDependency("rate limiter", () => limiter.standing(stored.record.id));
  const record = withKnownEnd(stored.record, standing);
  if (standing.ended || !isUsable(record))
    throw new ApiError(
      "key_not_found",
      `Key ${record.id} is revoked or expired: there is nothing to rotate. Rotate a key that works.`,
    );
  if (standing.rotatedAway || record.rotatedTo !== undefined)
    throw new ApiError(
      "key_not_found",
      `Key ${record.id} was rotated already${record.rotatedTo ? `, to ${record.rotatedTo}` : ""}: rotate the key ` +
        "that replaced it.",
    );
  const graceEnds = new Date(Date.now() + graceSeconds * 1000).toISOString();
  const oldExpiresAt = record.expiresAt && record.expiresAt < graceEnds ? record.expiresAt : graceEnds;
  const { id: _, createdAt: __, start: ___, expiresAt, rotatedTo: ____, ...kept } = record;
  const { key, record: rotated } = newApiKey(keyPrefixOf(c), {
    ...kept,
    ...(expiresAt && { expiresAt }),
    // One budget, one set of limits: the stamp goes with them.
    limitsSetAt: record.limitsSetAt ?? record.createdAt,
    budget: budgetOf(record),
  });
  const db = c.env.DB;
  const kv = c.env.API_KEYS;
  await auditedKeyOperation(
    db,
    {
      operation: "rotate",
      keyId: record.id,
      changes: { rotatedTo: rotated.id, expiresAt: oldExpiresAt, budget: budgetOf(record) },
      actor,
    },
    async () => {
      await auditedKeyOperation(
        db,
        {
          operation: "create",
          keyId: rotated.id,
          changes: { plan: rotated.plan, name: rotated.name, rotatedFrom: record.id, budget: budgetOf(record) },
          actor,
        },
        () => putApiKey(kv, key, rotated),
      );
      await storeKeyRecord(kv, stored.hash, { ...record, expiresAt: oldExpiresAt, rotatedTo: rotated.id });
      // The object decides at once what KV may show a minute late elsewhere: the old key acts only on itself, and
      // ends with its grace.
      const { revoked } = await callDependency("rate limiter", () =>
        limiter.rotate(record.id, Date.parse(oldExpiresAt)),
      );
      c.set("revocation", { budget: budgetOf(record), revoked });
    },
  );
  return {
    key,
    id: rotated.id,
    start: rotated.start!,
    expiresAt: rotated.expiresAt ?? null,
    previous: { id: record.id, expiresAt: oldExpiresAt },
  };
}
