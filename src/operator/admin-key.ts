import { z } from "zod";
import { ApiError } from "../framework/api-error";
import { Scope } from "../framework/operations/scopes";
import { Limits, Plan } from "../account/plans";
import { accountOf, limitsFor, type ApiKeyRecord } from "../account/key-record";

/** A key expiring within this is `expiring`. */
const EXPIRING_SOON_MS = 7 * 86_400_000;
/** A working key is `banned` while its account is, else `grace` once rotated away, else `expiring` or `live`. */
export const KEY_STATES = ["live", "expiring", "grace", "banned", "revoked", "expired"] as const;
type KeyState = (typeof KEY_STATES)[number];

export function keyState(
  record: Pick<ApiKeyRecord, "revokedAt" | "expiresAt" | "rotatedTo">,
  now: number,
  accountBanned = false,
): KeyState {
  if (record.revokedAt) return "revoked";
  const left = record.expiresAt ? Date.parse(record.expiresAt) - now : Infinity;
  if (left <= 0) return "expired";
  if (accountBanned) return "banned";
  if (record.rotatedTo) return "grace";
  return left <= EXPIRING_SOON_MS ? "expiring" : "live";
}

/** A key as the operator API shows it (`npm run keys -- show`): never the key itself, never its hash. */
export const AdminKey = z
  .object({
    id: z.string(),
    name: z.string(),
    start: z.string(),
    plan: Plan,
    budget: z.string().describe("The account it spends: its own id, or the key it was rotated from"),
    scopes: z.array(Scope),
    limits: Limits.nullable().describe("The limits in force: its own, or its plan's (null: an enterprise key without)"),
    ownLimits: z.boolean().describe("Whether the limits are the key's own rather than its plan's"),
    state: z.enum(KEY_STATES),
    createdAt: z.string(),
    expiresAt: z.string().nullable(),
    rotatedTo: z.string().nullable(),
    revokedAt: z.string().nullable(),
    revokedReason: z.enum(["leaked", "retired"]).nullable(),
  })
  .meta({ id: "AdminKey" });

export const adminKeyOf = (
  record: ApiKeyRecord,
  now = Date.now(),
  accountBanned = false,
): z.infer<typeof AdminKey> => ({
  id: record.id,
  name: record.name,
  start: record.start,
  plan: record.plan,
  budget: accountOf(record),
  scopes: record.scopes,
  limits: record.limits ?? (record.plan === "enterprise" ? null : limitsFor(record)),
  ownLimits: record.limits !== undefined,
  state: keyState(record, now, accountBanned),
  createdAt: record.createdAt,
  expiresAt: record.expiresAt ?? null,
  rotatedTo: record.rotatedTo ?? null,
  revokedAt: record.revokedAt ?? null,
  revokedReason: record.revokedReason ?? null,
});

/** At most ten years ahead: a key that outlives its service is a key nobody remembers. */
const LONGEST_EXPIRY_MS = 3_650 * 86_400_000;

/** An expiry asked for: an RFC 3339 instant, later than now and within ten years. */
export const FutureInstant = z.iso
  .datetime({ offset: true })
  .describe("When the key stops working (RFC 3339): later than now, within ten years");

export function checkedExpiry(expiresAt: string | undefined, now = Date.now()): string | undefined {
  if (expiresAt === undefined) return undefined;
  const at = Date.parse(expiresAt);
  if (!(at > now && at - now <= LONGEST_EXPIRY_MS))
    throw new ApiError("invalid_body", `expiresAt: ${expiresAt} is not later than now and within ten years.`);
  return new Date(at).toISOString();
}

/** The limits a key is given: its plan's (undefined), or both `perMinute` and `perDay` (enterprise). */
export function limitsAsked(plan: Plan, perMinute: number | undefined, perDay: number | undefined): Limits | undefined {
  if (perMinute === undefined && perDay === undefined) {
    if (plan === "enterprise") throw new ApiError("invalid_limits", "An enterprise key needs perMinute and perDay.");
    return undefined;
  }
  if (perMinute === undefined || perDay === undefined)
    throw new ApiError("invalid_limits", "Send both perMinute and perDay, or neither for the plan's limits.");
  return { perMinute, perDay };
}

/** A limit in a request body: a positive whole number. */
export const LimitField = z.int().min(1).max(999_999_999);
