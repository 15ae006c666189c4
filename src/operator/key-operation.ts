import type { Context } from "hono";
import { z } from "zod";
import { defineOperation, type Operation } from "../framework/operations/define-operation";
import type { AppEnv } from "../framework/app-env";
import { ApiError, type ErrorCode } from "../framework/api-error";
import { auditedKeyOperation, type KeyOperation } from "../keys/audit";
import { findKeyById } from "../keys/lookup";
import { accountOf, KeyIdParams, type ApiKeyRecord } from "../account/key-record";
import type { Usage } from "../account/policy";
import { accountStub } from "../account/account-stub";
import type { usageQueryParameters } from "../usage/usage-operations";
import { jsonBody } from "../framework/counted-body";

async function keyOf(c: Context<AppEnv>, keyId: string): Promise<ApiKeyRecord> {
  const found = await findKeyById(c.env, keyId);
  if (!found) throw new ApiError("not_found", `No key ${keyId}.`);
  return found;
}

/** The account of a key. */
export const accountOfRecord = (c: Context<AppEnv>, record: ApiKeyRecord) =>
  accountStub(c.env.ACCOUNTS, accountOf(record));

/** One operator action with its audit row first: a failure keeps it 'unknown'; no row, no action. */
export async function audited(
  c: Context<AppEnv>,
  record: ApiKeyRecord,
  operation: KeyOperation,
  changes: Record<string, unknown>,
  action: () => Promise<Usage>,
): Promise<Response> {
  const usage = await auditedKeyOperation(
    c.env.DB,
    {
      operation,
      keyId: record.id,
      changes: { ...changes, budget: accountOf(record) },
      actor: c.get("operatorActor") ?? "operator",
    },
    action,
  );
  return jsonBody(c, { keyId: record.id, budget: accountOf(record), usage });
}

const keyIdInvalid = { code: "not_found", message: "No such key: key ids look like key_0123456789abcdef." } as const;
const UsageBody = z.object({ keyId: z.string(), budget: z.string(), usage: z.object({}).loose() });

/** What every operator operation shares: the operator token, and no place in the public documents. */
const OPERATOR = {
  operator: true,
  tag: "Service",
  stability: "experimental",
  documented: false,
  errors: ["not_found"],
} as const;

/** An operator API operation on a key's account: the key as its account has it, then the action. */
export function keyOperation(
  spec: {
    operationId: string;
    method: "get" | "post" | "patch";
    /** The path after the key's (`/keys/{keyId}/<action>`); empty for the key itself. */
    action: string;
    summary: string;
    description: string;
    errors?: readonly ErrorCode[];
    queryParameters?: typeof usageQueryParameters;
    body?: z.ZodType;
    requestBody?: { description: string; schema: z.ZodType };
    status?: 200 | 201;
  },
  handle: (c: Context<AppEnv>, key: { record: ApiKeyRecord }) => Promise<Response>,
): Operation {
  return defineOperation({
    ...OPERATOR,
    ...(spec.errors && { errors: spec.errors }),
    ...(spec.queryParameters && { queryParameters: spec.queryParameters }),
    ...(spec.requestBody && { requestBody: spec.requestBody }),
    operationId: spec.operationId,
    method: spec.method,
    path: spec.action ? `/keys/{keyId}/${spec.action}` : "/keys/{keyId}",
    summary: spec.summary,
    description: spec.description,
    responses: {
      [spec.status ?? 200]: {
        description: spec.body ? spec.summary : "The account's usage",
        body: spec.body ?? UsageBody,
      },
    },
    params: { schema: KeyIdParams, invalid: keyIdInvalid },
    async handle(c, { keyId }) {
      return handle(c, { record: await keyOf(c, keyId) });
    },
  });
}
