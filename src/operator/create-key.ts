import { z } from "zod";
import { defineOperation } from "../framework/operations/define-operation";
import { readJsonBody } from "../framework/operations/read-json-body";
import { jsonBody } from "../framework/counted-body";
import { Scope } from "../framework/operations/scopes";
import { Plan } from "../account/plans";
import { DEFAULT_SCOPES } from "../account/key-record";
import { auditedKeyOperation } from "../keys/audit";
import { keyPrefixOf, newApiKey, storeNewKey } from "../keys/issue-key";
import { NO_STORE } from "./named-operators/named-operator";
import { AdminKey, adminKeyOf, checkedExpiry, FutureInstant, LimitField, limitsAsked } from "./admin-key";

const CreateKey = z.strictObject({
  plan: Plan,
  name: z.string().min(1).max(200).optional().describe('For people: who holds it (default: "<plan> key")'),
  perMinute: LimitField.optional().describe("With perDay: the key's own limits (an enterprise key needs them)"),
  perDay: LimitField.optional(),
  scopes: z.array(Scope).min(1).optional().describe("What it may do (default: orders:read, orders:write)"),
  expiresAt: FutureInstant.optional(),
});

/** POST /admin/keys: a new key of a new account, shown once; only its hash stored. Audited. */
export const createKey = defineOperation({
  operator: true,
  tag: "Service",
  stability: "experimental",
  documented: false,
  operationId: "createKey",
  method: "post",
  path: "/keys",
  summary: "Issue a key",
  description:
    "A new key with its own account: its plan (or its own limits), scopes and expiry. The key is in this " +
    "answer only; the service keeps its SHA-256. Audited.",
  requestBody: { description: "The key's plan, and optionally its name, limits, scopes and expiry", schema: CreateKey },
  responses: {
    201: {
      description: "The key, shown once, and what it is",
      body: z.object({ key: z.string().describe("The new key, shown this once") }).extend(AdminKey.shape),
    },
  },
  errors: ["invalid_body", "invalid_limits", "unsupported_media_type", "body_too_large"],
  async handle(c) {
    const asked = await readJsonBody(c, CreateKey);
    const limits = limitsAsked(asked.plan, asked.perMinute, asked.perDay);
    const expiresAt = checkedExpiry(asked.expiresAt);
    const { key, record } = newApiKey(keyPrefixOf(c), {
      plan: asked.plan,
      name: asked.name ?? `${asked.plan} key`,
      scopes: [...new Set(asked.scopes ?? DEFAULT_SCOPES)],
      ...(limits && { limits }),
      ...(expiresAt && { expiresAt }),
    });
    const { name, plan, scopes } = record;
    await auditedKeyOperation(
      c.env.DB,
      {
        operation: "create",
        keyId: record.id,
        changes: { plan, name, scopes, ...(limits && { limits }), ...(expiresAt && { expiresAt }) },
        actor: c.get("operatorActor") ?? "operator",
      },
      () => storeNewKey(c.env, key, record),
    );
    // The key is never logged or kept: this answer is its one showing.
    return jsonBody(c, { key, ...adminKeyOf(record) }, 201, NO_STORE);
  },
});
