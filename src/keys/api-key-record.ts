import { z } from "zod";

export const PLANS = ["free", "pro", "business", "enterprise"] as const;
export const Plan = z.enum(PLANS);
export type Plan = z.infer<typeof Plan>;

export const Limits = z.object({
  perMinute: z.number().int().positive(),
  perDay: z.number().int().positive(),
});
export type Limits = z.infer<typeof Limits>;

/** What a key may do: read orders (the list, the feed, the deprecated pets), write them (cancel), manage its budget's webhook endpoints. */
export const SCOPES = ["orders:read", "orders:write", "webhooks:manage"] as const;
export const Scope = z.enum(SCOPES);
export type Scope = z.infer<typeof Scope>;

/** An instant as the keys command writes it; anything else would compare as NaN, and a NaN expiry never comes. */
const Instant = z.iso.datetime({ offset: true });

/**
 * What KV holds under `key:<sha256 hex>` (docs/operations.md#api-keys). The key itself
 * is never stored. Checked whenever it is read: a record that does not fit is
 * refused, never half-trusted.
 */
export const ApiKeyRecord = z.object({
  id: z.string().regex(/^key_[0-9A-Za-z]{16}$/),
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
  /** Absent on keys made before scopes existed: those keep DEFAULT_SCOPES. */
  scopes: z.array(Scope).optional(),
  /** From then on the key answers 401. */
  expiresAt: Instant.optional(),
  /** Set on a key made by rotation: the id of the key whose budget (limiter) it shares. */
  budget: z.string().optional(),
  revokedAt: Instant.optional(),
});
export type ApiKeyRecord = z.infer<typeof ApiKeyRecord>;

/** What a key may do unless it asks for more (`--scopes`), and what a key made before scopes existed keeps: no scope added since. */
export const DEFAULT_SCOPES: readonly Scope[] = ["orders:read", "orders:write"];

export const scopesOf = (record: ApiKeyRecord): readonly Scope[] => record.scopes ?? DEFAULT_SCOPES;

/** The name of the limiter that counts this key: a rotated key and the key it replaced share one budget. */
export const budgetOf = (record: Pick<ApiKeyRecord, "id" | "budget">): string => record.budget ?? record.id;

/** When the record's limits were set, Unix ms. */
export const limitsSetAtOf = (record: ApiKeyRecord): number => Date.parse(record.limitsSetAt ?? record.createdAt);
