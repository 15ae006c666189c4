import { z } from "zod";

export const PLANS = ["free", "pro", "business", "enterprise"] as const;
export const Plan = z.enum(PLANS);
export type Plan = z.infer<typeof Plan>;

export const Limits = z.object({
  perMinute: z.number().int().positive(),
  perDay: z.number().int().positive(),
});
export type Limits = z.infer<typeof Limits>;

/** The one table of plan limits (docs/api.md#rate-limits). Enterprise limits are each account's own. */
export const PLAN_LIMITS: Record<Exclude<Plan, "enterprise">, Limits> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
};

/** Callers without a valid key are limited per address like a free key. */
export const ANONYMOUS_LIMITS = PLAN_LIMITS.free;

/** An operator is limited on their own: an address's 1,000 a day would ban an office by noon. */
export const OPERATOR_LIMITS = PLAN_LIMITS.business;

/** A partner reporting leaks is limited on its own: no neighbour's ban may refuse a leak's report. */
export const PARTNER_LIMITS = PLAN_LIMITS.business;

/** A partner's reports that can change nothing: a budget of their own, so replays spend nothing needed. */
export const UNCHANGING_REPORT_LIMITS = PLAN_LIMITS.pro;

/** The partners' budgets, by the name each is counted under (`partner:<name>`), with their limits. */
export const PARTNER_BUDGETS = {
  github: PARTNER_LIMITS,
  "github:changes-nothing": UNCHANGING_REPORT_LIMITS,
} as const satisfies Record<string, Limits>;
export type PartnerBudget = keyof typeof PARTNER_BUDGETS;

/** A partner is refused past its limits, never banned: else replaying its signed reports could switch it off. */
export const NEVER_BANNED = { threshold: Number.MAX_SAFE_INTEGER, seconds: 0 };
