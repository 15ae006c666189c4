import { z } from "zod";
import { Scope } from "../../framework/operations/scopes";
import { Plan } from "../../limiter/plans";
import { KeyIdParams, scopesOf, type ApiKeyRecord } from "../api-key-record";
import { isUsable } from "../api-key-record";

/** A key of the caller's budget as its holder sees it: never the key itself, never its hash. */
export const OwnKey = z
  .object({
    id: z.string().describe("The key's id (key_ and 16 letters and digits)"),
    name: z.string(),
    start: z.string().nullable().describe("The key's first 12 characters, to tell keys apart; null for keys made before they were kept"),
    plan: Plan,
    scopes: z.array(Scope),
    createdAt: z.string().describe("RFC 3339"),
    expiresAt: z.string().nullable().describe("When it stops working (RFC 3339): a rotation's grace end, or the expiry it was made with"),
    revokedAt: z.string().nullable(),
    usable: z.boolean().describe("Whether it may call the API now"),
    current: z.boolean().describe("Whether it is the key making this request"),
  })
  .meta({ id: "OwnKey" });

export const OwnKeys = z.object({ data: z.array(OwnKey) }).meta({ id: "OwnKeyList" });

export const RotateOwnKey = z.strictObject({
  graceSeconds: z
    .int()
    .min(0)
    .max(604_800)
    .default(86_400)
    .describe("How long the key being replaced keeps working (seconds, at most a week; 0 ends it now). A day unless asked."),
});

export const RotatedKey = z
  .object({
    key: z.string().describe("The new key, shown this once"),
    id: z.string(),
    start: z.string(),
    expiresAt: z.string().nullable(),
    previous: z.object({ id: z.string(), expiresAt: z.string().describe("When the replaced key stops working") }),
  })
  .meta({ id: "RotatedKey" });

export const RevokedKey = z.object({ id: z.string(), revokedAt: z.string() }).meta({ id: "RevokedKey" });

export const KEY_PARAMS = { schema: KeyIdParams, invalid: { code: "key_not_found", message: "No such key: key ids look like key_ and 16 letters and digits." } } as const;

/** What every operation on the budget's own keys shares. */
export const OWN_KEYS = { scope: "keys:manage", tag: "Keys", stability: "beta" } as const;

export function ownKeyOf(record: ApiKeyRecord, currentId: string, now = Date.now()): z.infer<typeof OwnKey> {
  return {
    id: record.id,
    name: record.name,
    start: record.start ?? null,
    plan: record.plan,
    scopes: [...scopesOf(record)],
    createdAt: record.createdAt,
    expiresAt: record.expiresAt ?? null,
    revokedAt: record.revokedAt ?? null,
    usable: isUsable(record, now),
    current: record.id === currentId,
  };
}
