import type { Context } from "hono";
import { defineOperation } from "../../framework/operations/define-operation";
import { readOptionalJsonBody } from "../../framework/operations/read-json-body";
import type { AppEnv } from "../../framework/app-env";
import { jsonBody } from "../../framework/counted-body";
import { ApiError } from "../../framework/api-error";
import { keyOfCaller } from "../require-api-key";
import { callDependency } from "../../lib/call-dependency";
import { isUsable } from "../api-key-record";
import { budgetOf } from "../api-key-record";
import { auditedKeyOperation } from "../audited-key-operation";
import { newApiKey, putApiKey } from "../issue-key";
import { storeKeyRecord } from "../kv-layout";
import { findApiKeyById } from "../lookup";
import { refuseRotatingFrom } from "./acting-key";
import { KEY_PARAMS, OWN_KEYS, RotatedKey, RotateOwnKey } from "./own-key-schemas";

/** Production's keys start so_live_, every other deployment's so_test_ (docs/api.md#authentication). */
const prefixOf = (c: Context<AppEnv>) =>
  c.get("config").baseUrl === c.get("config").productionBaseUrl ? "so_live_" : "so_test_";

/**
 * POST /v2/keys/{keyId}/rotate: a key of the caller's budget (usually the
 * calling one) replaced by a new one of the same budget, plan, limits and
 * scopes, as `npm run keys -- rotate` does; the old key works through the
 * grace period, then expires. Both audited.
 */
export const rotateOwnKey = defineOperation({
  ...OWN_KEYS,
  operationId: "rotateOwnKey",
  method: "post",
  path: "/keys/{keyId}/rotate",
  summary: "Rotate a key of the caller's budget",
  description:
    "Makes a new key to replace a key of the calling key's budget (usually the calling key itself): the same budget, " +
    "plan, " +
    "limits, scopes, expiry, webhook endpoints and usage. The new key is shown this once; the old one keeps working " +
    "for the " +
    "grace period (a day unless asked, at most a week, 0 for none), then expires, and a console session of it ends " +
    "with it. " +
    "A key of another budget, or one revoked or expired, is 404 key_not_found. A key that was rotated " +
    "away may rotate " +
    "no key, " +
    "itself included, and one made to expire only itself (403 key_acts_only_on_itself), so no rotation returns a key " +
    "that outlives the key that asked. With no grace the " +
    "old key is refused everywhere within 5 s. Audited, with the key that asked.",
  params: KEY_PARAMS,
  requestBody: { description: "The grace period (optional)", schema: RotateOwnKey },
  responses: { 201: { description: "The new key, shown once, and when the old one stops", body: RotatedKey } },
  errors: ["unsupported_media_type", "body_too_large", "invalid_body", "key_not_found", "key_acts_only_on_itself"],
  async handle(c, { keyId }) {
    const { graceSeconds } = await readOptionalJsonBody(c, RotateOwnKey);
    const caller = keyOfCaller(c);
    await refuseRotatingFrom(c, keyId);
    const kv = c.env.API_KEYS;
    // What KV holds now, not the cached record: an expiry set since is kept.
    const stored = await findApiKeyById(kv, keyId);
    if (!stored || budgetOf(stored.record) !== budgetOf(caller))
      throw new ApiError("key_not_found", `No key ${keyId} in this key's budget.`);
    const { record } = stored;
    // The budget's object, not KV, says whether the key still works: KV may show a key revoked elsewhere a minute ago
    // as live, and writing that record back would undo the revocation.
    const { ended } = await callDependency("rate limiter", () =>
      c.env.RATE_LIMITER.getByName(budgetOf(record)).standing(record.id),
    );
    if (ended || !isUsable(record))
      throw new ApiError(
        "key_not_found",
        `Key ${keyId} is revoked or expired: there is nothing to rotate. Rotate a key that works.`,
      );
    const graceEnds = new Date(Date.now() + graceSeconds * 1000).toISOString();
    const oldExpiresAt = record.expiresAt && record.expiresAt < graceEnds ? record.expiresAt : graceEnds;
    const { id: _, createdAt: __, start: ___, expiresAt, rotatedTo: ____, ...kept } = record;
    const { key, record: rotated } = newApiKey(prefixOf(c), {
      ...kept,
      ...(expiresAt && { expiresAt }),
      // One budget, one set of limits: the stamp goes with them.
      limitsSetAt: record.limitsSetAt ?? record.createdAt,
      budget: budgetOf(record),
    });
    const actor = `key:${caller.id}`;
    const db = c.env.DB;
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
          c.env.RATE_LIMITER.getByName(budgetOf(record)).rotate(record.id, Date.parse(oldExpiresAt)),
        );
        c.set("revocation", { budget: budgetOf(record), revoked });
      },
    );
    // The new key is never logged or kept: this answer is its one showing.
    return jsonBody(
      c,
      {
        key,
        id: rotated.id,
        start: rotated.start!,
        expiresAt: rotated.expiresAt ?? null,
        previous: { id: record.id, expiresAt: oldExpiresAt },
      },
      201,
    );
  },
});
