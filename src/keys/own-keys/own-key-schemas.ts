import { z } from "zod";
import { Scope } from "../../framework/operations/scopes";
import { Plan } from "../../account/plans";
import { KeyIdParams, type ApiKeyRecord } from "../../account/key-record";
import { isUsable } from "../../account/key-record";
import { leakedMakerOf, type LeakOfKey } from "../leaked-key-audit";

/** A key of the caller's account as its holder sees it: never the key itself, never its hash. */
export const OwnKey = z
  .object({
    id: z.string().describe("The key's id (key_ and 16 letters and digits)"),
    name: z.string(),
    start: z.string().describe("The key's first 12 characters, to tell keys apart"),
    plan: Plan,
    scopes: z.array(Scope),
    createdAt: z.string().describe("RFC 3339"),
    expiresAt: z
      .string()
      .nullable()
      .describe("When it stops working (RFC 3339): a rotation's grace end, or the expiry it was made with"),
    revokedAt: z.string().nullable(),
    revokedReason: z.enum(["leaked", "retired"]).nullable().describe("Why it was revoked; null while it is not"),
    leak: z
      .object({
        leakedAt: z.string().describe("When its revocation as leaked ended what it started"),
        foundAt: z.string().nullable().describe("Where it was found, when a scanner or an operator said"),
        source: z.string().nullable().describe("What kind of place (GitHub's source: commit, issue_comment, ...)"),
        endpointsDisabled: z.array(z.string()).describe("Webhook endpoints it made or last aimed, disabled then"),
        rotatedInto: z.array(z.string()).describe("Keys it made by rotation: rotate them"),
      })
      .nullable()
      .describe("What its revocation as leaked ended (docs/api.md#what-a-leak-ends); null for any other key"),
    madeByLeakedKey: z
      .string()
      .nullable()
      .describe(
        "Set on a key that a key revoked as leaked made by rotation: whoever held that key may hold this one; rotate " +
          "it",
      ),
    usable: z.boolean().describe("Whether it may call the API now"),
    current: z.boolean().describe("Whether it is the key making this request"),
  })
  .meta({ id: "OwnKey" });

export const OwnKeys = z
  .object({
    data: z.array(OwnKey),
    nextCursor: z.string().nullable().describe("Pass as cursor for the next page; null on the last"),
  })
  .meta({ id: "OwnKeyList" });

export const RotateOwnKey = z.strictObject({
  graceSeconds: z
    .int()
    .min(0)
    .max(604_800)
    .default(86_400)
    .describe(
      "How long the key being replaced keeps working (seconds, at most a week; 0 ends it now). A day unless asked.",
    ),
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

/** What a revocation as leaked ended (docs/api.md#what-a-leak-ends). */
export const LeakEnded = z
  .object({
    endpointsDisabled: z
      .array(z.string())
      .describe(
        "Webhook endpoints it made, or last aimed, now disabled: enable each again with confirmUrl once its URL is " +
          "checked",
      ),
    rotatedInto: z
      .array(z.string())
      .describe("Keys it made by rotation: they still work, and whoever held it may hold them too; rotate them"),
  })
  .meta({ id: "LeakEnded" });

export const RevokedKey = z
  .object({
    id: z.string(),
    revokedAt: z.string(),
    reason: z.enum(["leaked", "retired"]),
    leak: LeakEnded.optional().describe("Set when this request ended the key's leak"),
  })
  .meta({ id: "RevokedKey" });

export const KEY_PARAMS = {
  schema: KeyIdParams,
  invalid: { code: "key_not_found", message: "No such key: key ids look like key_ and 16 letters and digits." },
} as const;

/** What every operation on the account's own keys shares. */
export const OWN_KEYS = { scope: "keys:manage", tag: "Keys", stability: "beta" } as const;

export function ownKeyOf(
  record: ApiKeyRecord,
  currentId: string,
  now = Date.now(),
  leaks: ReadonlyMap<string, LeakOfKey> = new Map(),
): z.infer<typeof OwnKey> {
  return {
    id: record.id,
    name: record.name,
    start: record.start,
    plan: record.plan,
    scopes: record.scopes,
    createdAt: record.createdAt,
    expiresAt: record.expiresAt ?? null,
    revokedAt: record.revokedAt ?? null,
    revokedReason: record.revokedReason ?? null,
    leak: leaks.get(record.id) ?? null,
    madeByLeakedKey: leakedMakerOf(record.id, leaks),
    usable: isUsable(record, now),
    current: record.id === currentId,
  };
}
