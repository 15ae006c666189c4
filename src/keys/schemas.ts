import { z } from "zod";

export const PLANS = ["free", "pro", "business", "enterprise"] as const;
export const Plan = z.enum(PLANS);
export type Plan = z.infer<typeof Plan>;

export const Limits = z.object({
  perMinute: z.number().int().positive(),
  perDay: z.number().int().positive(),
});
export type Limits = z.infer<typeof Limits>;

/** What a key may do: read orders (the list, the deprecated pets), write them (cancel). */
export const SCOPES = ["orders:read", "orders:write"] as const;
export const Scope = z.enum(SCOPES);
export type Scope = z.infer<typeof Scope>;

/** What KV holds under `key:<sha256 hex>` (README, "API keys"). The key itself is never stored. */
export const ApiKeyRecord = z.object({
  id: z.string().regex(/^key_[0-9A-Za-z]{16}$/),
  plan: Plan,
  name: z.string(),
  createdAt: z.string(),
  limits: Limits.optional(),
  /** Absent on keys made before scopes existed: those may do everything. */
  scopes: z.array(Scope).optional(),
  /** ISO 8601; from then on the key answers 401. */
  expiresAt: z.string().optional(),
  /** Set on a key made by rotation: the id of the key whose budget (limiter) it shares. */
  budget: z.string().optional(),
  revokedAt: z.string().optional(),
});
export type ApiKeyRecord = z.infer<typeof ApiKeyRecord>;

export const scopesOf = (record: ApiKeyRecord): readonly Scope[] => record.scopes ?? SCOPES;

/** The name of the limiter that counts this key: a rotated key and the key it replaced share one budget. */
export const budgetOf = (record: ApiKeyRecord): string => record.budget ?? record.id;
