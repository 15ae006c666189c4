import { z } from "zod";
import { Scope } from "../framework/operations/scopes";
import { Limits, PLAN_LIMITS, PLAN_LIMITS_REVISED_AT, Plan } from "./plans";

/** An instant as the keys command writes it; anything else would compare as NaN, and a NaN expiry never comes. */
const Instant = z.iso.datetime({ offset: true });

/**
 * What KV holds under `key:<sha256 hex>` (docs/operations.md#api-keys). The key itself
 * is never stored. Checked whenever it is read: a record that does not fit is
 * refused, never half-trusted.
 */
/** A key's id: `key_` and 16 letters and digits. */
export const KeyId = z.string().regex(/^key_[0-9A-Za-z]{16}$/);
/** A key's id in a path (`/keys/{keyId}/...`), the owner's operations and the operator's alike. */
export const KeyIdParams = z.object({ keyId: KeyId });

export const ApiKeyRecord = z.object({
  id: KeyId,
  /**
   * The key's first 12 characters, shown so its holder can tell keys apart (absent on keys made before they were kept).
   */
  start: z
    .string()
    .regex(/^so_(live|test)_[0-9A-Za-z]{4}$/)
    .optional(),
  plan: Plan,
  name: z.string(),
  createdAt: Instant,
  limits: Limits.optional(),
  /**
   * When the plan or limits were last set (absent: at creation). Every key of
   * a budget carries the same stamp; the budget's object keeps the newest
   * limits it is shown, so a record read before an update never wins.
   */
  limitsSetAt: Instant.optional(),
  /** What it may do (docs/api.md#authentication). */
  scopes: z.array(Scope),
  /** From then on the key answers 401. */
  expiresAt: Instant.optional(),
  /** Set on a key made by rotation: the id of the key whose budget (limiter) it shares. */
  budget: z.string().optional(),
  /**
   * Set on a key rotated away: the key that replaced it. It works until expiresAt, its grace (absent on keys rotated
   * before this was kept).
   */
  rotatedTo: z.string().optional(),
  revokedAt: Instant.optional(),
  /**
   * Why it was revoked: `leaked` ended what it started (docs/api.md#what-a-leak-ends); absent on a key revoked before
   * reasons were kept: retired.
   */
  revokedReason: z.enum(["leaked", "retired"]).optional(),
  /** Set once a revocation as leaked has ended all the key started: until then, asking again ends it again. */
  leakEndedAt: Instant.optional(),
});
export type ApiKeyRecord = z.infer<typeof ApiKeyRecord>;

/** What a key may do unless it asks for more (`--scopes`). */
export const DEFAULT_SCOPES: readonly Scope[] = ["orders:read", "orders:write"];

/** The name of the limiter that counts this key: a rotated key and the key it replaced share one budget. */
export const budgetOf = (record: Pick<ApiKeyRecord, "id" | "budget">): string => record.budget ?? record.id;

/** When the record's limits were set, Unix ms. */
export const limitsSetAtOf = (record: ApiKeyRecord): number => Date.parse(record.limitsSetAt ?? record.createdAt);

/** A key's own limits when it has them (enterprise, or an override), else its plan's (the limiter's table). */
export function limitsFor(key: ApiKeyRecord): Limits {
  if (key.limits) return key.limits;
  if (key.plan === "enterprise") throw new Error(`enterprise key ${key.id} has no limits`);
  return PLAN_LIMITS[key.plan];
}

/**
 * The stamp of the limits limitsFor() gives, Unix ms: the record's, and no older than the plan table when they come
 * from it.
 */
export function limitsStampOf(key: ApiKeyRecord): number {
  const setAt = limitsSetAtOf(key);
  return key.limits ? setAt : Math.max(setAt, PLAN_LIMITS_REVISED_AT);
}

/** Whether a key may be used now: not revoked, not expired. */
export const isUsable = (key: ApiKeyRecord, now = Date.now()): boolean =>
  key.revokedAt === undefined && (key.expiresAt === undefined || Date.parse(key.expiresAt) > now);
