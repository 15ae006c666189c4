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

/**
 * An operator (behind Access, with a token, or in a console session) is
 * limited on their own, like a business key: the console reads the pipeline
 * every few seconds all day, which an address's 1,000 a day would refuse
 * within hours (and ban every operator and caller behind one office address
 * with it).
 */
export const OPERATOR_LIMITS = PLAN_LIMITS.business;

/**
 * A partner that reports leaked keys (GitHub's secret scanning, once its
 * signature verifies) is limited on its own, like a business key: a scan of
 * a large push sends many reports at once, and behind its address may be
 * anyone else's keyless traffic, whose ban must never refuse a leak's report.
 */
export const PARTNER_LIMITS = PLAN_LIMITS.business;

/**
 * A partner's reports that can change nothing (GitHub's with no token in this service's format, or sent again within
 * the hour: its retries, or anyone replaying one once seen) are limited on a budget of their own, like a pro key, so
 * they never spend what its next report that can revoke a key needs.
 */
export const UNCHANGING_REPORT_LIMITS = PLAN_LIMITS.pro;

/** The partners' budgets, by the name each is counted under (`partner:<name>`), with their limits. */
export const PARTNER_BUDGETS = {
  github: PARTNER_LIMITS,
  "github:changes-nothing": UNCHANGING_REPORT_LIMITS,
} as const satisfies Record<string, Limits>;
export type PartnerBudget = keyof typeof PARTNER_BUDGETS;

/**
 * A partner is refused past its limits with Retry-After, and never banned: a ban would let anyone who replays one of
 * its signed reports switch its reports off for as long as they keep going.
 */
export const NEVER_BANNED = { threshold: Number.MAX_SAFE_INTEGER, seconds: 0 };
