import type { ApiKeyRecord, Limits, Plan } from "../keys/api-key-record";

/** The one table of plan limits (docs/api.md#rate-limits). Enterprise limits come from each key. */
export const PLAN_LIMITS: Record<Exclude<Plan, "enterprise">, Limits> = {
  free: { perMinute: 60, perDay: 1_000 },
  pro: { perMinute: 300, perDay: 10_000 },
  business: { perMinute: 1_000, perDay: 100_000 },
};

/** Callers without a valid key are limited per address like a free key. */
export const ANONYMOUS_LIMITS = PLAN_LIMITS.free;

/** A key's own limits when it has them (enterprise, or an override), else its plan's. */
export function limitsFor(key: ApiKeyRecord): Limits {
  if (key.limits) return key.limits;
  if (key.plan === "enterprise") throw new Error(`enterprise key ${key.id} has no limits`);
  return PLAN_LIMITS[key.plan];
}
