import { z } from "zod";

export const PLANS = ["free", "pro", "business", "enterprise"] as const;
export const Plan = z.enum(PLANS);
export type Plan = z.infer<typeof Plan>;

export const Limits = z.object({
  perMinute: z.number().int().positive(),
  perDay: z.number().int().positive(),
});
export type Limits = z.infer<typeof Limits>;

/** What KV holds under `key:<sha256 hex>` (README, "API keys"). The key itself is never stored. */
export const ApiKeyRecord = z.object({
  id: z.string().regex(/^key_[0-9A-Za-z]{16}$/),
  plan: Plan,
  name: z.string(),
  createdAt: z.string(),
  limits: Limits.optional(),
  revokedAt: z.string().optional(),
});
export type ApiKeyRecord = z.infer<typeof ApiKeyRecord>;
